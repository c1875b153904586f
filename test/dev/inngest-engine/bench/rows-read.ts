/**
 * Rows the local engine reads from its `runs` and `jobs` tables per run, while runs accumulate
 * and while they queue: the cost of a long `npm start` must stay flat, not grow with every run
 * ever made nor with the backlog of jobs waiting to be claimed.
 *   npx tsx test/dev/inngest-engine/bench/rows-read.ts [steps=8]
 * Measures 200 runs on an empty engine, then 200 more once 600 have finished (800 in all); each
 * 200 are sent at once, so most of them wait in the queue as a backlog of due jobs.
 * Starts its own embedded PostgreSQL; reads pg_stat_user_tables (seq_tup_read + idx_tup_fetch).
 */
import { rm } from "node:fs/promises";
import { Client } from "pg";
import pino from "pino";
import { createLocalEngine } from "../../../../src/dev/inngest-engine";
import { startScratchPostgres } from "../../../support/test-postgres";
import { startBenchApp } from "./bench-app";

const schema = "inngest_rows";

async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 8);
  const { folder, server } = await startScratchPostgres();
  const engine = createLocalEngine({ databaseUrl: server.url, schema, logger: pino({ level: "warn" }) });
  const { url: engineUrl } = await engine.listen(0);
  const app = await startBenchApp({ engineUrl, steps });
  const stats = new Client({ connectionString: server.url });
  await stats.connect();
  try {
    await engine.sync(app.url);
    let sent = 0;
    const runBatch = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i += 20) {
        const events = Array.from({ length: Math.min(20, count - i) }, () => ({
          name: "bench/order",
          data: { orderId: `o-${sent++}` },
        }));
        await fetch(`${engineUrl}/e/bench`, { method: "POST", body: JSON.stringify(events) });
      }
      await engine.drain();
    };
    const rowsRead = async (): Promise<Map<string, number>> => {
      // Backends report their counters when idle, at most every 10 s (PostgreSQL 15's pgstat).
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      await stats.query("SELECT pg_stat_clear_snapshot()");
      const { rows } = await stats.query<{ name: string; read: string }>(
        `SELECT relname AS name, (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS read
         FROM pg_stat_user_tables WHERE schemaname = $1 AND relname IN ('runs', 'jobs')`,
        [schema],
      );
      return new Map(rows.map((row) => [row.name, Number(row.read)]));
    };
    const measure = async (label: string): Promise<void> => {
      const before = await rowsRead();
      await runBatch(200);
      const after = await rowsRead();
      const perRun = (table: string) =>
        (((after.get(table) ?? 0) - (before.get(table) ?? 0)) / 200).toFixed(1);
      console.log(
        `${label}: rows read per run (${steps} steps): runs ${perRun("runs")}, jobs ${perRun("jobs")}`,
      );
    };
    await measure("runs 1-200   ");
    await runBatch(400);
    await measure("runs 601-800 ");
  } finally {
    await stats.end();
    await app.close();
    await engine.close();
    await server.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
