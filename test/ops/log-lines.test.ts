import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseConfig } from "../../src/config";
import { startStandIns } from "../../src/dev/stand-ins";
import { createTestDatabase } from "../support/database";
import { captureLog } from "../support/log-capture";

/** One log line carries one `component`, and a decline's message is said once. */
describe("log lines", () => {
  it("say an error's message once, with its causes nested rather than appended", () => {
    const log = captureLog();
    const stripeError = new Error("Your card was declined.");
    const rejected = new Error("Your card was declined.", { cause: stripeError });
    const stepError = new Error("declined: Your card was declined.", { cause: rejected });
    log.logger.error({ err: stepError }, "workflow step failed for good");

    const [line] = log.lines();
    const err = line?.err as { message: string; cause?: { message: string; cause?: { message: string } } };
    expect(err.message).toBe("declined: Your card was declined.");
    expect(err.cause?.message).toBe("Your card was declined.");
    expect(err.cause?.cause?.message).toBe("Your card was declined.");
  });

  it("name the local engine's component once (npm start's stand-ins)", async () => {
    const database = await createTestDatabase();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "log-lines-"));
    const log = captureLog();
    try {
      const config = parseConfig({
        DATA_DIR: dataDir,
        // Every port 0: startStandIns checks PORT too, and 3000 may be taken on this machine.
        PORT: "0",
        DATABASE_URL: database.url,
        STRIPE_SECRET_KEY: "sk_test_x",
        STRIPE_WEBHOOK_SECRET: "whsec_x",
        ADMIN_API_TOKEN: "an-admin-token-0123456789",
        LOCAL_ENGINE_PORT: "0",
        STRIPE_SANDBOX_PORT: "0",
        EASYPOST_SANDBOX_PORT: "0",
      });
      const standIns = await startStandIns(config, log.logger);
      expect(standIns.localEngine).toBeDefined();
      // A request the engine refuses makes it log under its own component.
      await fetch(`${standIns.endpoints.localEngineUrl}/v1/runs/no-such-run`);
      await standIns.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
      await database.drop();
    }
    const lines = log
      .text()
      .split("\n")
      .filter((text) => text.includes('"component"'));
    expect(lines.length).toBeGreaterThan(0);
    for (const text of lines) expect(text.match(/"component"/g)).toHaveLength(1);
    expect(log.lines().some((line) => line.component === "local-engine")).toBe(true);
  });
});
