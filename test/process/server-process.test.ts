import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { runToExit, startServer } from "../support/server-process";

jest.setTimeout(240_000);

describe("the server process", () => {
  it("refuses to start in production with an empty environment, naming every missing variable", async () => {
    const result = await runToExit({ NODE_ENV: "production" });

    expect(result.code).toBe(1);
    for (const name of [
      "DATABASE_URL",
      "STRIPE_SECRET_KEY",
      "STRIPE_WEBHOOK_SECRET",
      "INNGEST_SIGNING_KEY",
      "INNGEST_EVENT_KEY",
      "SMTP_URL",
      "SLACK_WEBHOOK_URL",
      "ADMIN_API_TOKEN",
      // The real carrier must be configured: the EasyPost stand-in never starts in production.
      "EASYPOST_API_KEY",
      "EASYPOST_WEBHOOK_SECRET",
      "WAREHOUSE_NAME",
      "WAREHOUSE_STREET1",
      "WAREHOUSE_CITY",
      "WAREHOUSE_ZIP",
      "WAREHOUSE_COUNTRY",
    ]) {
      expect(result.stderr).toContain(`${name}: required`);
    }
    expect(result.stdout).not.toMatch(/embedded|listening/);
  });

  it("boots on the embedded PostgreSQL with no configuration, then shuts down on SIGTERM", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "of-embedded-"));
    try {
      const server = await startServer({
        DATA_DIR: dataDir,
        STRIPE_SANDBOX_PORT: "0",
        EASYPOST_SANDBOX_PORT: "0",
        LOCAL_ENGINE_PORT: "0",
      });
      const ready = await fetch(`${server.url}/readyz`);
      expect(ready.status).toBe(200);
      const products = await fetch(`${server.url}/healthz`);
      expect(await products.json()).toEqual({ status: "ok" });

      const code = await server.stop("SIGTERM");
      expect(code).toBe(0);
      expect(server.output()).toContain("embedded PostgreSQL started");
      expect(server.output()).toContain("shutdown complete");
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
