import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../../src/dev/embedded-postgres";
import { createLogger } from "../../src/logger";

/**
 * The embedded PostgreSQL the global setup started, for the global teardown (both run in jest's
 * main process; a global survives between them, module state may not).
 */
export interface Started {
  folder: string;
  server: EmbeddedPostgres;
}

const key = Symbol.for("order-fulfillment.test-postgres");
const holder = globalThis as unknown as Record<symbol, Started | undefined>;

export const testPostgres = {
  set(started: Started): void {
    holder[key] = started;
  },
  take(): Started | undefined {
    const started = holder[key];
    holder[key] = undefined;
    return started;
  },
};

/** A throw-away embedded PostgreSQL in a new temporary folder, on a free loopback port. */
export async function startScratchPostgres(): Promise<Started> {
  const folder = await mkdtemp(path.join(tmpdir(), "order-fulfillment-test-pg-"));
  const server = await startEmbeddedPostgres({
    dir: path.join(folder, "postgres"),
    password: randomBytes(12).toString("hex"),
    logger: createLogger({ level: "warn" }),
    ephemeral: true,
  });
  return { folder, server };
}
