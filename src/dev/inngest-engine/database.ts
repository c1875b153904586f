import { Client, Pool } from "pg";
import { createHash } from "node:crypto";

/**
 * The engine's own tables, in their own schema, created with plain SQL (not Prisma): the
 * engine is a dev tool that must not touch the service's migrations. Every statement the
 * engine runs later is a single statement (CTEs instead of BEGIN/COMMIT), which also keeps it
 * usable on the embedded PGlite server where connections share one session.
 */
export function schemaDdl(schema: string): string {
  const s = quoteIdent(schema);
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.apps (
  url text PRIMARY KEY,
  app_id text NOT NULL,
  synced_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.functions (
  id text PRIMARY KEY,
  app_url text NOT NULL,
  config jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.events (
  internal_id text PRIMARY KEY,
  seq bigserial,
  id text,
  name text NOT NULL,
  payload jsonb NOT NULL,
  received_at timestamptz NOT NULL,
  deduplicated boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS events_name_idx ON ${s}.events (name, seq);
-- False from when an event is stored until every run it triggers exists (see EventIntake).
ALTER TABLE ${s}.events ADD COLUMN IF NOT EXISTS triggered boolean NOT NULL DEFAULT true;
CREATE TABLE IF NOT EXISTS ${s}.event_ids (
  id text PRIMARY KEY,
  internal_id text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS ${s}.runs (
  id text PRIMARY KEY,
  function_id text NOT NULL,
  event_id text,
  event jsonb NOT NULL,
  events jsonb NOT NULL,
  status text NOT NULL,
  max_attempts integer NOT NULL,
  concurrency jsonb NOT NULL DEFAULT '[]',
  output jsonb,
  error jsonb,
  started_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX IF NOT EXISTS runs_event_idx ON ${s}.runs (event_id);
CREATE INDEX IF NOT EXISTS runs_function_idx ON ${s}.runs (function_id, started_at);
-- Statements that look for running runs read only those, not every run ever made.
CREATE INDEX IF NOT EXISTS runs_running_idx ON ${s}.runs (id) WHERE status = 'Running';
CREATE TABLE IF NOT EXISTS ${s}.steps (
  run_id text NOT NULL,
  id text NOT NULL,
  seq bigserial,
  name text,
  op text,
  result jsonb NOT NULL,
  completed_at timestamptz NOT NULL,
  PRIMARY KEY (run_id, id)
);
ALTER TABLE ${s}.steps ADD COLUMN IF NOT EXISTS started_at timestamptz;
ALTER TABLE ${s}.steps ADD COLUMN IF NOT EXISTS duration_ms double precision;
CREATE TABLE IF NOT EXISTS ${s}.jobs (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL,
  kind text NOT NULL,
  step_id text NOT NULL,
  step_name text,
  attempt integer NOT NULL DEFAULT 0,
  run_at timestamptz NOT NULL,
  claimed boolean NOT NULL DEFAULT false,
  event_name text,
  expression text
);
-- The claim's order: it reads the first due jobs of a backlog and no more.
CREATE INDEX IF NOT EXISTS jobs_pending_idx ON ${s}.jobs (run_at, id) WHERE NOT claimed;
DROP INDEX IF EXISTS ${s}.jobs_due_idx;
-- A claim is a lease: a claimed job whose lease ran out (its task ended without handing it back,
-- e.g. the database refused the release) is claimable again.
ALTER TABLE ${s}.jobs ADD COLUMN IF NOT EXISTS lease_expires_at timestamptz;
CREATE INDEX IF NOT EXISTS jobs_lease_idx ON ${s}.jobs (lease_expires_at) WHERE claimed;
CREATE INDEX IF NOT EXISTS jobs_run_idx ON ${s}.jobs (run_id);
CREATE INDEX IF NOT EXISTS jobs_wait_idx ON ${s}.jobs (event_name) WHERE kind = 'wait';
CREATE TABLE IF NOT EXISTS ${s}.cancellations (
  run_id text NOT NULL,
  function_id text NOT NULL,
  event_name text NOT NULL,
  expression text,
  expires_at timestamptz
);
CREATE INDEX IF NOT EXISTS cancellations_event_idx ON ${s}.cancellations (event_name);
CREATE INDEX IF NOT EXISTS cancellations_run_idx ON ${s}.cancellations (run_id);
CREATE TABLE IF NOT EXISTS ${s}.idempotency_keys (
  function_id text NOT NULL,
  key text NOT NULL,
  run_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (function_id, key)
);
CREATE TABLE IF NOT EXISTS ${s}.cron_fires (
  function_id text NOT NULL,
  cron text NOT NULL,
  last_fire_at timestamptz NOT NULL,
  PRIMARY KEY (function_id, cron)
);
CREATE TABLE IF NOT EXISTS ${s}.pending_starts (
  function_id text NOT NULL,
  key text NOT NULL,
  events jsonb NOT NULL,
  event_ids jsonb NOT NULL,
  first_at timestamptz NOT NULL,
  run_at timestamptz NOT NULL,
  PRIMARY KEY (function_id, key)
);
CREATE INDEX IF NOT EXISTS pending_starts_due_idx ON ${s}.pending_starts (run_at);
`;
}

export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`Invalid schema name "${name}"`);
  return `"${name}"`;
}

export interface EngineDatabase {
  pool: Pool;
  /** False on PGlite, whose socket connections share one session (see Sql). */
  preparedStatements: boolean;
  /** Releases the ownership lock and closes every connection. */
  close(): Promise<void>;
}

/**
 * Opens the pool, creates the schema and takes a session advisory lock that makes this
 * engine the only one working on the schema. Jobs claimed by a previous (dead) owner are
 * released, because only the owner's process could have been executing them.
 */
export async function openEngineDatabase(options: {
  url: string;
  schema: string;
  poolSize: number;
}): Promise<EngineDatabase> {
  const lockKey = createHash("sha256")
    .update(`inngest-local-engine:${options.schema}`)
    .digest()
    .readBigInt64BE(0);
  const lockClient = new Client({ connectionString: options.url });
  await lockClient.connect();
  let pool: Pool | undefined;
  let preparedStatements = false;
  try {
    const { rows: versionRows } = await lockClient.query<{ version: string }>("SELECT version() AS version");
    preparedStatements = !/PGlite/i.test(versionRows[0]?.version ?? "");
    pool = new Pool({
      connectionString: options.url,
      max: options.poolSize,
      // Every statement of the engine finds its rows by a key or a partial index, but its tables
      // are small queues whose statistics lag: the planner then reads the whole `jobs` table (a
      // page or two of live rows, more as a backlog builds) for one job by id, and a prepared
      // statement keeps that plan. Rows read then grow with the work queued rather than with
      // the work done. Scans stay possible where no index serves a statement (the drain check).
      // PGlite's connections share one session and take no startup options.
      ...(preparedStatements ? { options: "-c enable_seqscan=off" } : {}),
    });
    const { rows } = await lockClient.query<{ locked: boolean }>(
      "SELECT pg_try_advisory_lock($1) AS locked",
      [lockKey.toString()],
    );
    if (!rows[0]?.locked) {
      throw new Error(
        `Another local Inngest engine already uses schema "${options.schema}" in this database`,
      );
    }
    await pool.query(schemaDdl(options.schema));
    await pool.query(`UPDATE ${quoteIdent(options.schema)}.jobs SET claimed = false WHERE claimed`);
  } catch (error) {
    await Promise.allSettled([lockClient.end(), pool?.end()]);
    throw error;
  }
  // A pool error event without a listener would crash the process (e.g. the server restarting).
  pool.on("error", () => undefined);
  lockClient.on("error", () => undefined);
  return {
    pool,
    preparedStatements,
    async close() {
      await pool.end().catch(() => undefined);
      await lockClient.query("SELECT pg_advisory_unlock($1)", [lockKey.toString()]).catch(() => undefined);
      await lockClient.end().catch(() => undefined);
    },
  };
}
