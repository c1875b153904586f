import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startEmbeddedPostgres } from "../../src/dev/embedded-postgres";
import { createLogger } from "../../src/logger";

/**
 * The PostgreSQL a benchmark runs against: the URL it was given (`--database-url`, or
 * TEST_DATABASE_URL as in the tests), or by default an embedded PostgreSQL in a temporary folder,
 * started for the run and removed after it (default durability settings, as a real server has).
 */
export async function benchDatabaseServer(given?: string): Promise<{
  url: string;
  /** The postmaster's pid, for reading the server's CPU time; undefined for a given server. */
  pid?: number;
  stop(): Promise<void>;
}> {
  if (given) return { url: given, stop: async () => undefined };
  const folder = await mkdtemp(path.join(tmpdir(), "order-fulfillment-bench-pg-"));
  const server = await startEmbeddedPostgres({
    dir: path.join(folder, "postgres"),
    password: randomBytes(12).toString("hex"),
    logger: createLogger({ level: "warn" }),
    // Per-statement execution and planning time (bench:orders prints the app database's largest),
    // statements run by triggers and functions included (marked nested: their time is their caller's).
    settings: [
      "shared_preload_libraries=pg_stat_statements",
      "pg_stat_statements.track_planning=on",
      "pg_stat_statements.track=all",
      "pg_stat_statements.max=5000",
    ],
  });
  const pidLine = readFileSync(path.join(folder, "postgres", "postmaster.pid"), "utf8").split("\n")[0];
  return {
    url: server.url,
    pid: Number(pidLine) || undefined,
    async stop() {
      await server.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
