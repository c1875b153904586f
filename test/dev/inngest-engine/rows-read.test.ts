import { openEngineDatabase, type EngineDatabase } from "../../../src/dev/inngest-engine/database";
import { RunStore } from "../../../src/dev/inngest-engine/run-store";
import { Sql } from "../../../src/dev/inngest-engine/sql";
import { createTestDatabase, type TestDatabase } from "../../support/database";

/**
 * The engine's `jobs` table is a queue: when runs come in faster than the app serves them, a
 * backlog of due jobs builds up. The statements run per step must read the few rows they need,
 * whatever that backlog: rows read per order must not grow with the work queued.
 *
 * Counted with pg_stat_xact_user_tables (the backend's own table counters, exact and immediate,
 * read before and after inside one transaction), each statement run repeatedly so its prepared form's generic plan is counted too.
 */
describe("engine statements read a bounded number of jobs rows, whatever the backlog", () => {
  const schema = "inngest_rows";
  let database: TestDatabase;
  let engineDb: EngineDatabase;
  let runs: RunStore;
  let sql: Sql;
  const now = new Date(Date.UTC(2026, 5, 1));

  beforeAll(async () => {
    database = await createTestDatabase();
    // One connection: the transaction below sees every statement's counters.
    engineDb = await openEngineDatabase({ url: database.url, schema, poolSize: 1 });
    sql = new Sql(engineDb.pool, engineDb.preparedStatements);
    runs = new RunStore(sql, schema);
  });
  afterAll(async () => {
    await engineDb.close();
    await database.drop();
  });

  /** `count` running runs, each with one due call job and one sleep due in a day. */
  async function addBacklog(prefix: string, count: number): Promise<void> {
    await engineDb.pool.query(
      `WITH r AS (
         INSERT INTO ${schema}.runs (id, function_id, event_id, event, events, status, max_attempts, started_at)
         SELECT $1 || n, 'app-fn', $1 || n, '{}', '[]', 'Running', 3, $3 FROM generate_series(1, $2) n
         RETURNING id
       ), calls AS (
         INSERT INTO ${schema}.jobs (run_id, kind, step_id, attempt, run_at) SELECT id, 'call', 'step', 0, $3 FROM r
       )
       INSERT INTO ${schema}.jobs (run_id, kind, step_id, attempt, run_at)
       SELECT id, 'sleep', 'nap', 0, $3::timestamptz + interval '1 day' FROM r`,
      [prefix, count, now],
    );
  }

  /** Rows of `jobs` read (sequential + by index) by `work`, rolled back afterwards. */
  async function jobsRowsRead(work: () => Promise<void>): Promise<number> {
    const read = async (): Promise<number> => {
      const { rows } = await engineDb.pool.query<{ read: string }>(
        `SELECT (coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0))::text AS read
         FROM pg_stat_xact_user_tables WHERE schemaname = $1 AND relname = 'jobs'`,
        [schema],
      );
      return Number(rows[0]?.read ?? 0);
    };
    await engineDb.pool.query("BEGIN");
    try {
      // The backend's pending counters span transactions until it reports them (never inside one).
      const before = await read();
      await work();
      return (await read()) - before;
    } finally {
      await engineDb.pool.query("ROLLBACK");
    }
  }

  /** Per statement: claim 8 × 5 jobs, then advance, checkpoint and finish 8 claimed runs. */
  async function perStatement(): Promise<Record<string, number>> {
    const claimed: { id: string; runId: string }[] = [];
    const claim = await jobsRowsRead(async () => {
      for (let i = 0; i < 8; i++) {
        const { claimed: jobs } = await runs.claimDue(now, 5);
        claimed.push(...jobs.map(({ job }) => ({ id: job.id, runId: job.runId })));
      }
    });
    expect(claimed).toHaveLength(40);
    // The claims were rolled back: claim them for real for the statements below.
    for (let i = 0; i < 8; i++) await runs.claimDue(now, 5);
    const eight = claimed.slice(0, 8);
    const checkpoint = await jobsRowsRead(async () => {
      for (const job of eight)
        await runs.checkpointSteps({
          runId: job.runId,
          jobId: job.id,
          results: [{ id: "a", name: "a", op: "StepRun", result: { data: 1 } }],
          now,
        });
    });
    const advance = await jobsRowsRead(async () => {
      for (const job of eight)
        await runs.advanceRun({
          jobId: job.id,
          runId: job.runId,
          results: [{ id: "a", name: "a", op: "StepRun", result: { data: 1 } }],
          newJobs: [],
          now,
          claimDiscovery: true,
        });
    });
    const finish = await jobsRowsRead(async () => {
      for (const job of eight) await runs.finishRun(job.runId, "Completed", { output: 1 }, now);
    });
    return { claim: claim / 8, checkpoint: checkpoint / 8, advance: advance / 8, finish: finish / 8 };
  }

  test("a backlog of 3,000 runs costs each statement what a backlog of 50 does", async () => {
    await addBacklog("small-", 50);
    const small = await perStatement();
    await addBacklog("large-", 2_950);
    const large = await perStatement();
    await engineDb.pool.query(`ANALYZE ${schema}.jobs`);
    const analysed = await perStatement();
    process.stdout.write(`jobs rows read per statement: ${JSON.stringify({ small, large, analysed })}\n`);

    // A claim of 5 reads the 5 it takes, again to update them, and as many to find the next due
    // time past them; the others read the run's own jobs: none of them reads the backlog.
    for (const figures of [small, large, analysed]) {
      expect(figures.claim).toBeLessThanOrEqual(20);
      expect(figures.checkpoint).toBeLessThanOrEqual(2);
      expect(figures.advance).toBeLessThanOrEqual(4);
      expect(figures.finish).toBeLessThanOrEqual(4);
    }
  });
});
