import type { Sql } from "./sql";
import { quoteIdent } from "./database";
import { GroupCommit } from "./group-commit";
import type {
  ConcurrencySlot,
  EngineEvent,
  Job,
  JobKind,
  RunContext,
  RunStatus,
  SerializedError,
  StepResult,
} from "./types";

/** A step result to memoise, with what the REST API shows about it. */
export interface StepRecord {
  id: string;
  name: string | null;
  op: string;
  result: StepResult;
  /** When the SDK reported timing (ISO time, ms). */
  startedAt?: string;
  durationMs?: number;
}

export interface NewJob {
  kind: JobKind;
  stepId: string;
  stepName?: string | null;
  attempt: number;
  runAt: Date;
  eventName?: string;
  expression?: string;
}

export interface NewRun {
  id: string;
  functionId: string;
  /** The internal id of the triggering event (what the event API returned). */
  eventId: string;
  event: EngineEvent;
  events: EngineEvent[];
  maxAttempts: number;
  concurrency: ConcurrencySlot[];
  idempotency?: { key: string; expiresAt: Date };
  cancellations: { eventName: string; expression: string | null; expiresAt: Date | null }[];
}

export interface PendingMatch {
  runId: string;
  jobId: string;
  stepId: string;
  stepName: string | null;
  functionId: string;
  expression: string | null;
  runEvent: EngineEvent;
}

interface JobRow {
  id: string;
  run_id: string;
  kind: JobKind;
  step_id: string;
  step_name: string | null;
  attempt: number;
  run_at: Date | string;
  event_name: string | null;
  expression: string | null;
}

function toJob(row: JobRow): Job {
  return {
    id: String(row.id),
    runId: row.run_id,
    kind: row.kind,
    stepId: row.step_id,
    stepName: row.step_name,
    attempt: row.attempt,
    runAt: new Date(row.run_at),
    eventName: row.event_name,
    expression: row.expression,
  };
}

export interface RunRow {
  id: string;
  function_id: string;
  event_id: string | null;
  event: EngineEvent;
  status: RunStatus;
  output: unknown;
  error: SerializedError | null;
  started_at: Date;
  ended_at: Date | null;
}

export interface StepRow {
  id: string;
  name: string | null;
  op: string | null;
  result: StepResult;
  completed_at: Date;
  started_at: Date | null;
  duration_ms: number | null;
}

export interface PendingJobRow {
  kind: JobKind;
  step_id: string;
  step_name: string | null;
  attempt: number;
  run_at: Date;
  event_name: string | null;
}

/** A run as `runContextJson` returns it. */
interface RunContextRow {
  id: string;
  function_id: string;
  status: RunStatus;
  event: EngineEvent;
  events: EngineEvent[];
  max_attempts: number;
  concurrency: ConcurrencySlot[];
  steps: { id: string; result: StepResult }[];
}

/** SQL for one run's context as JSON (`r` is the run's row), memoised steps in completion order. */
function runContextJson(s: string): string {
  return `json_build_object('id', r.id, 'function_id', r.function_id, 'status', r.status, 'event', r.event,
            'events', r.events, 'max_attempts', r.max_attempts, 'concurrency', r.concurrency,
            'steps', COALESCE((SELECT json_agg(json_build_object('id', st.id, 'result', st.result) ORDER BY st.seq)
                               FROM ${s}.steps st WHERE st.run_id = r.id), '[]'))`;
}

function toRunContext(row: RunContextRow): RunContext {
  return {
    id: row.id,
    functionId: row.function_id,
    status: row.status,
    event: row.event,
    events: row.events,
    maxAttempts: row.max_attempts,
    concurrency: row.concurrency,
    steps: new Map(row.steps.map((step) => [step.id, step.result])),
  };
}

/** A claimed job; call jobs come with their run as it was when claimed (undefined: run gone). */
export interface ClaimedJob {
  job: Job;
  run?: RunContext;
}

/** One checkpoint POST's write. */
export interface CheckpointWrite {
  runId: string;
  /** The job of the call the checkpoint comes from (its attempts are reset). */
  jobId: string | undefined;
  results: StepRecord[];
  now: Date;
}

/**
 * Runs, their memoised steps and their pending jobs. Every method is one SQL statement
 * (checkpoints that arrive together share one).
 */
export class RunStore {
  private readonly s: string;
  private readonly checkpointWrites = new GroupCommit((inputs: CheckpointWrite[]) =>
    this.writeCheckpoints(inputs),
  );

  /** SQL for the end of a lease taken now (real time: a hung call lasts real time, whatever the clock). */
  private readonly leaseEnd: string;

  constructor(
    private readonly sql: Sql,
    schema: string,
    /** Real ms a claim lasts unless renewed (renewLeases) by the task holding it. */
    readonly leaseMs = 30_000,
  ) {
    this.s = quoteIdent(schema);
    this.leaseEnd = `clock_timestamp() + interval '${Math.max(1, Math.round(leaseMs))} milliseconds'`;
  }

  /**
   * Creates the run, its first job and its cancellation hooks, unless the idempotency key is
   * taken. With `claimed`, the first job is created claimed: the caller executes it at once
   * (no claim statement, no run to load); a restart releases it like any claimed job.
   * A function gets one run per triggering event: an event delivered again after a failed
   * first delivery (see EventStore.saveEvent) starts only the runs still missing. With
   * `markEventTriggered`, the same statement records that the event's work is done.
   */
  async createRun(
    run: NewRun,
    now: Date,
    claimed = false,
    markEventTriggered = false,
  ): Promise<{ created: boolean; jobId?: string }> {
    const s = this.s;
    const { rows } = await this.sql.query(
      "createRun",
      `WITH idem AS (
         INSERT INTO ${s}.idempotency_keys (function_id, key, run_id, expires_at)
         SELECT $2, $8::text, $1, $9 WHERE $8::text IS NOT NULL
         ON CONFLICT (function_id, key) DO UPDATE
           SET run_id = EXCLUDED.run_id, expires_at = EXCLUDED.expires_at
           WHERE ${s}.idempotency_keys.expires_at <= $10
         RETURNING 1
       ), run AS (
         INSERT INTO ${s}.runs (id, function_id, event_id, event, events, status, max_attempts, concurrency, started_at)
         SELECT $1, $2, $3, $4, $5, 'Running', $6, $7, $10
         WHERE ($8::text IS NULL OR EXISTS (SELECT 1 FROM idem))
           AND NOT EXISTS (SELECT 1 FROM ${s}.runs WHERE event_id = $3 AND function_id = $2)
         RETURNING id
       ), job AS (
         INSERT INTO ${s}.jobs (run_id, kind, step_id, attempt, run_at, claimed, lease_expires_at)
         SELECT id, 'call', 'step', 0, $10, $12::boolean, CASE WHEN $12::boolean THEN ${this.leaseEnd} END FROM run
         RETURNING id
       ), cancel AS (
         INSERT INTO ${s}.cancellations (run_id, function_id, event_name, expression, expires_at)
         SELECT run.id, $2, c.event_name, c.expression, c.expires_at
         FROM run, jsonb_to_recordset($11::jsonb) AS c(event_name text, expression text, expires_at timestamptz)
       ), marked AS (
         UPDATE ${s}.events SET triggered = true WHERE $13::boolean AND internal_id = $3 AND NOT triggered
       )
       SELECT (SELECT count(*)::int FROM run) AS created, (SELECT id FROM job) AS job_id`,
      [
        run.id,
        run.functionId,
        run.eventId,
        JSON.stringify(run.event),
        JSON.stringify(run.events),
        run.maxAttempts,
        JSON.stringify(run.concurrency),
        run.idempotency?.key ?? null,
        run.idempotency?.expiresAt ?? null,
        now,
        JSON.stringify(
          run.cancellations.map((c) => ({
            event_name: c.eventName,
            expression: c.expression,
            expires_at: c.expiresAt,
          })),
        ),
        claimed,
        markEventTriggered,
      ],
    );
    const row = rows[0] as { created: number; job_id: string | null } | undefined;
    return { created: row?.created === 1, jobId: row?.job_id == null ? undefined : String(row.job_id) };
  }

  async loadRun(runId: string): Promise<RunContext | undefined> {
    const { rows } = await this.sql.query<{ run: RunContextRow }>(
      "loadRun",
      `SELECT ${runContextJson(this.s)} AS run FROM ${this.s}.runs r WHERE r.id = $1`,
      [runId],
    );
    const row = rows[0];
    return row ? toRunContext(row.run) : undefined;
  }

  /**
   * Claims due jobs (SKIP LOCKED keeps concurrent claimers from taking the same job), with the
   * run of each call job, and tells when the earliest job left unclaimed comes due: one
   * statement where a claim, a run load per job and a timer lookup used to be three or more.
   * A claimed job whose lease has run out is due again, unless one of `held` (the jobs this
   * process's tasks still execute, whose renewal a database outage may have delayed).
   */
  async claimDue(
    now: Date,
    limit: number,
    held: readonly string[] = [],
  ): Promise<{ claimed: ClaimedJob[]; nextDueAt?: Date }> {
    const s = this.s;
    const { rows } = await this.sql.query<{
      claimed: { job: JobRow; run: RunContextRow | null }[] | null;
      next_due_at: Date | null;
    }>(
      "claimDue",
      `WITH fresh AS (
         -- Two index scans that stop after $2 rows each (one condition with an OR read every
         -- due job of a backlog): unclaimed jobs by (run_at, id), then expired leases.
         SELECT id, run_at FROM ${s}.jobs
         WHERE NOT claimed AND run_at <= $1
         ORDER BY run_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
       ), expired AS (
         SELECT id, run_at FROM ${s}.jobs
         -- statement_timestamp(), not the volatile clock_timestamp(): an index condition only
         -- then, so the scan reads the expired leases alone, not every job in flight.
         WHERE claimed AND lease_expires_at < statement_timestamp() AND run_at <= $1 AND id <> ALL($3::bigint[])
         ORDER BY lease_expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
       ), picked AS (
         SELECT id FROM (SELECT * FROM fresh UNION ALL SELECT * FROM expired) due
         ORDER BY run_at, id LIMIT $2
       ), claimed AS (
         UPDATE ${s}.jobs SET claimed = true, lease_expires_at = ${this.leaseEnd}
         WHERE id IN (SELECT id FROM picked)
         RETURNING id, run_id, kind, step_id, step_name, attempt, run_at, event_name, expression
       )
       SELECT (SELECT json_agg(json_build_object(
                 'job', c,
                 'run', CASE WHEN c.kind = 'call' THEN (SELECT ${runContextJson(s)} FROM ${s}.runs r WHERE r.id = c.run_id) END)
               ORDER BY c.run_at, c.id) FROM claimed c) AS claimed,
              (SELECT min(run_at) FROM ${s}.jobs WHERE NOT claimed AND id NOT IN (SELECT id FROM claimed)) AS next_due_at`,
      [now, limit, held],
    );
    const row = rows[0];
    return {
      claimed: (row?.claimed ?? []).map((entry) => ({
        job: toJob(entry.job),
        run: entry.run ? toRunContext(entry.run) : undefined,
      })),
      nextDueAt: row?.next_due_at ? new Date(row.next_due_at) : undefined,
    };
  }

  /** Work that is due now, or (when time flows by itself) retries that will come due. */
  async hasRunnableWork(now: Date, includeFutureCalls: boolean): Promise<boolean> {
    const { rows } = await this.sql.query<{ busy: boolean }>(
      "hasRunnableWork",
      `SELECT EXISTS (SELECT 1 FROM ${this.s}.jobs WHERE run_at <= $1 OR ($2 AND kind = 'call'))
         OR EXISTS (SELECT 1 FROM ${this.s}.pending_starts WHERE run_at <= $1) AS busy`,
      [now, includeFutureCalls],
    );
    return rows[0]?.busy ?? false;
  }

  /**
   * The one transition for a run in flight: the current job is consumed, step results are
   * memoised and new jobs are queued. When nothing else is pending for the run, a discovery
   * call (`stepId=step`) is queued so the SDK can tell what comes next; parallel steps thus
   * report back before the function continues. Returns found=false when the job no longer
   * exists (the run was cancelled or finished meanwhile).
   */
  async advanceRun(input: {
    jobId: string;
    runId: string;
    results: StepRecord[];
    newJobs: NewJob[];
    now: Date;
    claimDiscovery: boolean;
    /**
     * With a discovery job, also return the run as this statement found it, with `results`
     * merged in (they are not visible to the statement that writes them). Callers hold the
     * run's lock, so no other write to the run can slip in between.
     */
    loadRunWithDiscovery?: boolean;
  }): Promise<{ found: boolean; discovery?: Job; queued: Job[]; run?: RunContext }> {
    const s = this.s;
    const { rows } = await this.sql.query<{
      found: number;
      discovery: JobRow | null;
      queued: JobRow[] | null;
      run: RunContextRow | null;
    }>(
      "advanceRun",
      `WITH cur AS (
         DELETE FROM ${s}.jobs WHERE id = $1 RETURNING run_id
       ), saved AS (
         INSERT INTO ${s}.steps (run_id, id, name, op, result, completed_at, started_at, duration_ms)
         SELECT cur.run_id, r.id, r.name, r.op, r.result, $4, r."startedAt", r."durationMs"
         FROM cur, jsonb_to_recordset($3::jsonb) AS r(id text, name text, op text, result jsonb, "startedAt" timestamptz, "durationMs" float8)
         ON CONFLICT (run_id, id) DO NOTHING
       ), others AS (
         SELECT step_id FROM ${s}.jobs WHERE run_id = $2 AND id <> $1
       ), queued AS (
         INSERT INTO ${s}.jobs (run_id, kind, step_id, step_name, attempt, run_at, event_name, expression)
         SELECT cur.run_id, j.kind, j.step_id, j.step_name, j.attempt, j.run_at, j.event_name, j.expression
         FROM cur, jsonb_to_recordset($5::jsonb) AS j(kind text, step_id text, step_name text, attempt int, run_at timestamptz, event_name text, expression text)
         WHERE j.step_id NOT IN (SELECT step_id FROM others)
         RETURNING id, run_id, kind, step_id, step_name, attempt, run_at, event_name, expression
       ), discovery AS (
         INSERT INTO ${s}.jobs (run_id, kind, step_id, attempt, run_at, claimed, lease_expires_at)
         SELECT cur.run_id, 'call', 'step', 0, $4, $6, CASE WHEN $6::boolean THEN ${this.leaseEnd} END FROM cur
         WHERE jsonb_array_length($5::jsonb) = 0 AND NOT EXISTS (SELECT 1 FROM others)
         RETURNING id, run_id, kind, step_id, step_name, attempt, run_at, event_name, expression
       )
       SELECT (SELECT count(*)::int FROM cur) AS found,
              (SELECT row_to_json(discovery) FROM discovery) AS discovery,
              (SELECT json_agg(queued) FROM queued) AS queued,
              (SELECT ${runContextJson(s)} FROM ${s}.runs r
               WHERE $7::boolean AND r.id = $2 AND EXISTS (SELECT 1 FROM discovery)) AS run`,
      [
        input.jobId,
        input.runId,
        JSON.stringify(input.results),
        input.now,
        JSON.stringify(
          input.newJobs.map((job) => ({
            kind: job.kind,
            step_id: job.stepId,
            step_name: job.stepName ?? null,
            attempt: job.attempt,
            run_at: job.runAt.toISOString(),
            event_name: job.eventName ?? null,
            expression: job.expression ?? null,
          })),
        ),
        input.claimDiscovery,
        input.loadRunWithDiscovery ?? false,
      ],
    );
    const row = rows[0];
    let run: RunContext | undefined;
    if (row?.run) {
      run = toRunContext(row.run);
      // As ON CONFLICT DO NOTHING did: a step already memoised keeps its first result.
      for (const result of input.results)
        if (!run.steps.has(result.id)) run.steps.set(result.id, result.result);
    }
    return {
      found: (row?.found ?? 0) > 0,
      discovery: row?.discovery ? toJob(row.discovery) : undefined,
      queued: (row?.queued ?? []).map(toJob),
      run,
    };
  }

  /**
   * A checkpoint from the SDK while its call is open: memoises the steps in arrival order
   * (a repeated id is ignored) and resets the attempts of the job the call belongs to, so the
   * next step gets a fresh retry budget. found=false when the run is unknown or has ended.
   */
  async checkpointSteps(input: CheckpointWrite): Promise<{ found: boolean }> {
    return this.checkpointWrites.submit(input);
  }

  /** Checkpoints that arrive together, in one statement (see GroupCommit). */
  private async writeCheckpoints(inputs: CheckpointWrite[]): Promise<{ found: boolean }[]> {
    const s = this.s;
    const { rows } = await this.sql.query<{ found: string[] | null }>(
      "checkpointSteps",
      `WITH input AS (
         SELECT i.run_id, i.job_id, i.steps, i.now, i.ord
         FROM ROWS FROM (jsonb_to_recordset($1::jsonb) AS (run_id text, job_id bigint, steps jsonb, now timestamptz))
              WITH ORDINALITY AS i(run_id, job_id, steps, now, ord)
       ), run AS (
         -- A lookup by primary key per checkpoint: as a join, the planner (which cannot see how
         -- few rows the JSON holds) hashed the whole runs table, every run ever made, each time.
         SELECT input.* FROM input
         WHERE (SELECT r.status FROM ${s}.runs r WHERE r.id = input.run_id) = 'Running'
       ), saved AS (
         INSERT INTO ${s}.steps (run_id, id, name, op, result, completed_at, started_at, duration_ms)
         SELECT run.run_id, st.id, st.name, st.op, st.result, run.now, st."startedAt", st."durationMs"
         FROM run, ROWS FROM (jsonb_to_recordset(run.steps)
                AS (id text, name text, op text, result jsonb, "startedAt" timestamptz, "durationMs" float8))
              WITH ORDINALITY AS st(id, name, op, result, "startedAt", "durationMs", ord)
         ORDER BY run.ord, st.ord
         ON CONFLICT (run_id, id) DO NOTHING
       ), reset AS (
         UPDATE ${s}.jobs j SET attempt = 0 FROM run
         WHERE j.id = run.job_id AND j.run_id = run.run_id AND j.attempt <> 0
       )
       SELECT array_agg(run_id) AS found FROM run`,
      [
        JSON.stringify(
          inputs.map((input) => ({
            run_id: input.runId,
            job_id: input.jobId ?? null,
            steps: input.results,
            now: input.now,
          })),
        ),
      ],
    );
    const found = new Set(rows[0]?.found ?? []);
    return inputs.map((input) => ({ found: found.has(input.runId) }));
  }

  /** Ends a running run; returns undefined when it had already ended. */
  async finishRun(
    runId: string,
    status: Exclude<RunStatus, "Running">,
    outcome: { output?: unknown; error?: SerializedError; results?: StepRecord[] },
    now: Date,
  ): Promise<{ functionId: string; event: EngineEvent } | undefined> {
    const s = this.s;
    const { rows } = await this.sql.query<{ function_id: string; event: EngineEvent }>(
      "finishRun",
      `WITH run AS (
         UPDATE ${s}.runs SET status = $2, output = $3, error = $4, ended_at = $5
         WHERE id = $1 AND status = 'Running'
         RETURNING id, function_id, event
       ), saved AS (
         INSERT INTO ${s}.steps (run_id, id, name, op, result, completed_at, started_at, duration_ms)
         SELECT run.id, r.id, r.name, r.op, r.result, $5, r."startedAt", r."durationMs"
         FROM run, jsonb_to_recordset($6::jsonb) AS r(id text, name text, op text, result jsonb, "startedAt" timestamptz, "durationMs" float8)
         ON CONFLICT (run_id, id) DO NOTHING
       ), jobs AS (
         DELETE FROM ${s}.jobs WHERE run_id IN (SELECT id FROM run)
       ), cancels AS (
         DELETE FROM ${s}.cancellations WHERE run_id IN (SELECT id FROM run)
       )
       SELECT function_id, event FROM run`,
      [
        runId,
        status,
        outcome.output === undefined ? null : JSON.stringify(outcome.output),
        outcome.error === undefined ? null : JSON.stringify(outcome.error),
        now,
        JSON.stringify(outcome.results ?? []),
      ],
    );
    const row = rows[0];
    return row ? { functionId: row.function_id, event: row.event } : undefined;
  }

  /** Hands a claimed job back to the queue (after an unexpected error) to be tried again later. */
  async releaseJob(jobId: string, runAt: Date): Promise<void> {
    await this.sql.query(
      "releaseJob",
      `UPDATE ${this.s}.jobs SET claimed = false, lease_expires_at = NULL, run_at = $2 WHERE id = $1`,
      [jobId, runAt],
    );
  }

  /** Extends the leases of the jobs this process is executing. */
  async renewLeases(jobIds: readonly string[]): Promise<void> {
    if (jobIds.length === 0) return;
    await this.sql.query(
      "renewLeases",
      `UPDATE ${this.s}.jobs SET lease_expires_at = ${this.leaseEnd} WHERE claimed AND id = ANY($1::bigint[])`,
      [jobIds],
    );
  }

  async deleteJob(jobId: string): Promise<void> {
    await this.sql.query("deleteJob", `DELETE FROM ${this.s}.jobs WHERE id = $1`, [jobId]);
  }

  /** waitForEvent steps of running runs that wait for this event name. */
  async findWaits(eventName: string): Promise<PendingMatch[]> {
    const { rows } = await this.sql.query<{
      job_id: string;
      run_id: string;
      step_id: string;
      step_name: string | null;
      function_id: string;
      expression: string | null;
      event: EngineEvent;
    }>(
      "findWaits",
      `SELECT j.id AS job_id, j.run_id, j.step_id, j.step_name, r.function_id, j.expression, r.event
       FROM ${this.s}.jobs j JOIN ${this.s}.runs r ON r.id = j.run_id
       WHERE j.kind = 'wait' AND j.event_name = $1 AND r.status = 'Running'
       ORDER BY j.id`,
      [eventName],
    );
    return rows.map((row) => ({
      jobId: String(row.job_id),
      runId: row.run_id,
      stepId: row.step_id,
      stepName: row.step_name,
      functionId: row.function_id,
      expression: row.expression,
      runEvent: row.event,
    }));
  }

  async findCancellations(
    eventName: string,
    now: Date,
  ): Promise<Omit<PendingMatch, "jobId" | "stepId" | "stepName">[]> {
    const { rows } = await this.sql.query<{
      run_id: string;
      function_id: string;
      expression: string | null;
      event: EngineEvent;
    }>(
      "findCancellations",
      `SELECT c.run_id, c.function_id, c.expression, r.event
       FROM ${this.s}.cancellations c JOIN ${this.s}.runs r ON r.id = c.run_id
       WHERE c.event_name = $1 AND (c.expires_at IS NULL OR c.expires_at > $2) AND r.status = 'Running'`,
      [eventName, now],
    );
    return rows.map((row) => ({
      runId: row.run_id,
      functionId: row.function_id,
      expression: row.expression,
      runEvent: row.event,
    }));
  }

  /** Event names that running runs wait for; lets event intake skip the lookup for all others. */
  async waitedEventNames(): Promise<string[]> {
    const { rows } = await this.sql.query<{ event_name: string }>(
      "waitedEventNames",
      `SELECT DISTINCT event_name FROM ${this.s}.jobs WHERE kind = 'wait'`,
    );
    return rows.map((row) => row.event_name);
  }

  async getRun(
    runId: string,
  ): Promise<{ run: RunRow; steps: StepRow[]; pending: PendingJobRow[] } | undefined> {
    const { rows } = await this.sql.query<RunRow & { steps: StepRow[]; pending: PendingJobRow[] }>(
      "getRun",
      `SELECT r.id, r.function_id, r.event_id, r.event, r.status, r.output, r.error, r.started_at, r.ended_at,
              COALESCE((SELECT json_agg(json_build_object('id', st.id, 'name', st.name, 'op', st.op,
                         'result', st.result, 'completed_at', st.completed_at, 'started_at', st.started_at,
                         'duration_ms', st.duration_ms) ORDER BY st.seq)
                        FROM ${this.s}.steps st WHERE st.run_id = r.id), '[]') AS steps,
              COALESCE((SELECT json_agg(json_build_object('kind', j.kind, 'step_id', j.step_id, 'step_name', j.step_name, 'attempt', j.attempt,
                         'run_at', j.run_at, 'event_name', j.event_name) ORDER BY j.id)
                        FROM ${this.s}.jobs j WHERE j.run_id = r.id), '[]') AS pending
       FROM ${this.s}.runs r WHERE r.id = $1`,
      [runId],
    );
    const row = rows[0];
    if (!row) return undefined;
    const { steps, pending, ...run } = row;
    return { run, steps, pending };
  }

  async listRuns(filter: {
    eventId?: string;
    functionId?: string;
    status?: string;
    /** The order whose runs to list: its id in the triggering event's data (`data.orderId`). */
    orderId?: string;
    limit: number;
  }): Promise<RunRow[]> {
    const { rows } = await this.sql.query<RunRow>(
      "listRuns",
      `SELECT id, function_id, event_id, event, status, output, error, started_at, ended_at
       FROM ${this.s}.runs
       WHERE ($1::text IS NULL OR event_id = $1
              OR event_id IN (SELECT internal_id FROM ${this.s}.events WHERE id = $1 AND NOT deduplicated)) AND ($2::text IS NULL OR function_id = $2)
         AND ($3::text IS NULL OR status = $3)
         AND ($5::text IS NULL OR event->'data'->>'orderId' = $5)
       ORDER BY started_at, id LIMIT $4`,
      [
        filter.eventId ?? null,
        filter.functionId ?? null,
        filter.status ?? null,
        filter.limit,
        filter.orderId ?? null,
      ],
    );
    return rows;
  }
}
