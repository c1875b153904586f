import http from "node:http";
import type { AddressInfo } from "node:net";
import expressApp from "express";
import type express from "express";
import type { Logger } from "../../logger";
import { checkpointFastPath, createApi, standaloneServer } from "./api";
import { AppClient } from "./app-client";
import { createEngineClock, type EngineClock } from "./clock";
import { KeyedMutex } from "../../shared/keyed-mutex";
import { Checkpoints } from "./checkpoint";
import { ConcurrencyLimiter } from "./concurrency";
import { openEngineDatabase, quoteIdent, type EngineDatabase } from "./database";
import { PendingStarts } from "./flow-control";
import { EventStore } from "./event-store";
import { defaultRetryBackoff, Executor } from "./executor";
import { EventIntake } from "./intake";
import { RunLifecycle } from "./lifecycle";
import { FunctionRegistry } from "./registry";
import { RunStore } from "./run-store";
import { Scheduler } from "./scheduler";
import { Sql } from "./sql";
import { AppSync, type SyncKind } from "./sync";
import type { Job, RunContext } from "./types";

export { createEngineClock, type EngineClock } from "./clock";
export { ExpressionError } from "./expressions";
export type { SyncKind } from "./sync";

export interface LocalEngineOptions {
  /** PostgreSQL holding the engine's state (its own schema, created on start). */
  databaseUrl: string;
  schema?: string;
  logger: Logger;
  /** serve() URLs to sync once the engine is up (retried while the app starts). */
  appUrls?: string[];
  /**
   * How the engine syncs an app: `out-of-band` (default: the PUT the Inngest dev server and
   * self-hosted Inngest send, then the SDK's POST /fn/register) or `in-band` (Inngest Cloud's).
   */
  syncKind?: SyncKind;
  /** Virtual clock; default real time. */
  clock?: EngineClock;
  /** When set, requests to the app are signed like Inngest Cloud's (`X-Inngest-Signature`). */
  signingKey?: string;
  /** PostgreSQL connections in the pool (default 8). */
  poolSize?: number;
  /** Jobs executed at once (default 64). */
  maxConcurrentJobs?: number;
  /** Virtual ms before retry `attempt` (1-based) when the app sent no `retry-after`; default 1 s doubling to 1 min. */
  retryBackoff?: (attempt: number) => number;
  /** Real ms a call to an unreachable app is retried without spending an attempt (default 60 s). */
  appUnreachableGraceMs?: number;
  /** Real ms to wait for the app's reply to one call (default 5 min). */
  requestTimeoutMs?: number;
  /**
   * Real ms a claimed job is leased for (default 30 s), renewed while its task runs: a job whose
   * task ended without handing it back (the database was away) is claimed again once it runs out.
   */
  jobLeaseMs?: number;
  /** Real ms between fallback polls for due work (default 1 s). */
  pollIntervalMs?: number;
  /**
   * Send `ctx.fn_id`/`qi_id` on discovery calls, so the SDK checkpoints steps to
   * `/v1/checkpoint/:runId/async` as it does with Inngest (default true); false = classic.
   */
  checkpointing?: boolean;
  /** On a clock faster than real time, one cron fires at most once per this many real ms (default 1 s). */
  cronMinRealIntervalMs?: number;
  /**
   * Origins (`http://host:port`) of several processes serving the same app, as replicas behind
   * one address are in production: function calls to any of them are spread over all of them,
   * round-robin (benchmarks with more than one app process). Default: none.
   */
  appReplicaOrigins?: string[];
}

/** Counters since start, for benchmarks and tests. */
export interface EngineStats {
  /** HTTP calls to serve() (including unreachable retries). */
  calls: number;
  /** The same, per function id (crons firing meanwhile are counted apart). */
  callsByFunction: Record<string, number>;
  /** Checkpoint POSTs accepted. */
  checkpoints: number;
  /** SQL statements run by the engine. */
  statements: number;
  /** The same, by statement name (`claimDue`, `checkpointSteps`, ...). */
  statementsByName: Record<string, number>;
}

export interface LocalEngine {
  /** Resolves once the schema exists, stored functions are loaded and `appUrls` had a sync attempt. */
  ready(): Promise<void>;
  listen(port: number, host?: string): Promise<{ url: string }>;
  /**
   * Inngest's HTTP API (`POST /e/:key`, `POST /fn/register`, `/v1/...`), mountable in the
   * caller's express app; paths it does not know fall through to the next handler.
   */
  handler: express.Express;
  sync(appUrl: string, kind?: SyncKind): Promise<void>;
  clock: {
    now(): Date;
    /** Moves virtual time, fires what came due and waits until the engine is idle again. */
    advance(ms: number): Promise<void>;
  };
  /**
   * Resolves when no run has runnable work: every run is finished, sleeping or waiting for an
   * event. Retries waiting for their backoff count as runnable unless the clock is frozen
   * (timeScale 0), in which case only `clock.advance` can bring them due.
   */
  drain(): Promise<void>;
  /** Stops loops, aborts calls in flight and closes the pool; state stays in PostgreSQL. */
  close(): Promise<void>;
  /** Whether discovery calls checkpoint (see `LocalEngineOptions.checkpointing`). */
  readonly checkpointing: boolean;
  stats(): EngineStats;
}

interface Core {
  db: EngineDatabase;
  sql: Sql;
  checkpoints: Checkpoints;
  runs: RunStore;
  intake: EventIntake;
  scheduler: Scheduler;
  executor: Executor;
  sync: AppSync;
  api: express.Express;
}

export function createLocalEngine(options: LocalEngineOptions): LocalEngine {
  const logger = options.logger.child({ component: "local-engine" });
  const clock = options.clock ?? createEngineClock();
  const schema = options.schema ?? "inngest_local";
  const registry = new FunctionRegistry();
  const runLocks = new KeyedMutex();
  const limiter = new ConcurrencyLimiter();
  const app = new AppClient({
    signingKey: options.signingKey,
    timeoutMs: options.requestTimeoutMs ?? 300_000,
    replicaOrigins: options.appReplicaOrigins,
  });
  let server: http.Server | undefined;
  let closed = false;
  let core: Core | undefined;
  const checkpointing = options.checkpointing ?? true;

  const initialise = async (): Promise<Core> => {
    const db = await openEngineDatabase({
      url: options.databaseUrl,
      schema,
      poolSize: options.poolSize ?? 8,
    });
    const sql = new Sql(db.pool, db.preparedStatements);
    const runs = new RunStore(sql, schema, options.jobLeaseMs);
    const events = new EventStore(sql, schema);
    const lifecycle = new RunLifecycle(runs, clock, logger);
    const checkpoints = new Checkpoints({ logger, runs, runLocks, signingKey: options.signingKey });
    // The scheduler needs the executor and the executor wakes the scheduler: late-bound.
    const late: { scheduler?: Scheduler; executor?: Executor } = {};
    const wake = (): void => late.scheduler?.wake();
    const capacityFreed = (): void => late.scheduler?.capacityFreed();
    const noteTimer = (at: Date): void => late.scheduler?.noteTimer(at);
    const noteStartAt = (at: Date): void => late.scheduler?.noteStartAt(at);
    const pendingStarts = new PendingStarts(sql, quoteIdent(schema));
    const executeNow = {
      hasRoom: (): boolean => (late.executor?.capacity ?? 0) > 0,
      start: (job: Job, run: RunContext): void => late.executor?.start(job, run),
    };
    const intake = new EventIntake({
      logger,
      clock,
      runs,
      events,
      registry,
      lifecycle,
      runLocks,
      wake,
      executeNow,
      pendingStarts,
      noteStartAt,
    });
    const executor = new Executor(
      {
        logger,
        clock,
        runs,
        registry,
        app,
        limiter,
        runLocks,
        checkpoints,
        lifecycle,
        intake,
        wake,
        capacityFreed,
        noteTimer,
      },
      {
        checkpointing,
        maxConcurrentJobs: options.maxConcurrentJobs ?? 64,
        retryBackoff: options.retryBackoff ?? defaultRetryBackoff,
        unreachableGraceMs: options.appUnreachableGraceMs ?? 60_000,
      },
    );
    late.executor = executor;
    const scheduler = new Scheduler(
      { logger, clock, runs, events, registry, intake, executor, pendingStarts },
      {
        pollIntervalMs: options.pollIntervalMs ?? 1_000,
        cronMinRealIntervalMs: options.cronMinRealIntervalMs ?? 1_000,
      },
    );
    late.scheduler = scheduler;
    const sync = new AppSync({
      logger,
      clock,
      events,
      registry,
      app,
      onFunctionsChanged: () => scheduler.refreshCrons(),
      kind: options.syncKind ?? "out-of-band",
      signed: options.signingKey !== undefined,
    });
    await sync.restore();
    await intake.loadWaitedNames();
    await scheduler.start();
    const api = createApi({
      logger,
      runs,
      events,
      intake,
      lifecycle,
      runLocks,
      registry,
      sync,
      checkpoints,
      clock,
    });
    core = { db, sql, checkpoints, runs, intake, scheduler, executor, sync, api };
    return core;
  };

  const corePromise = initialise();
  // Callers may never await ready(); keep a failed start from becoming an unhandled rejection.
  corePromise.catch((error: unknown) => logger.error({ err: error }, "local engine failed to start"));

  const syncWithRetry = async (core: Core, url: string): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await core.sync.sync(url);
        return;
      } catch (error) {
        if (attempt >= 20 || closed) {
          logger.error({ err: error, url }, "could not sync app");
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2_000)));
      }
    }
  };
  const readyPromise = corePromise.then(async (core) => {
    await Promise.all((options.appUrls ?? []).map((url) => syncWithRetry(core, url)));
  });
  readyPromise.catch(() => undefined);

  // Requests that arrive while the engine starts wait for it instead of failing.
  const handler = expressApp();
  handler.disable("x-powered-by");
  handler.use((req, res, next) => {
    corePromise.then((core) => core.api(req, res, next), next);
  });

  const drain = async (): Promise<void> => {
    const core = await corePromise;
    for (;;) {
      const idle = (): boolean => !core.executor.busy && core.scheduler.idle && core.intake.pending === 0;
      if (idle()) {
        const busy = await core.runs.hasRunnableWork(clock.now(), clock.timeScale > 0);
        if (!busy && idle()) return;
        core.scheduler.wake();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  return {
    checkpointing,
    stats: () => ({
      calls: app.calls,
      callsByFunction: Object.fromEntries(app.callsByFunction),
      checkpoints: core?.checkpoints.accepted ?? 0,
      statements: core?.sql.statements ?? 0,
      statementsByName: Object.fromEntries(core?.sql.statementsByName ?? []),
    }),
    ready: () => readyPromise,
    handler,
    async listen(port, host = "127.0.0.1") {
      const core = await corePromise;
      const routes = standaloneServer(handler, logger);
      const checkpoint = checkpointFastPath({ checkpoints: core.checkpoints, clock, logger });
      const listening = http.createServer((req, res) => {
        if (!checkpoint(req, res)) routes(req, res);
      });
      await new Promise<void>((resolve, reject) => {
        listening.once("error", reject);
        listening.listen(port, host, () => resolve());
      });
      server = listening;
      const address = listening.address() as AddressInfo;
      const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
      const url = `http://${shownHost.includes(":") ? `[${shownHost}]` : shownHost}:${address.port}`;
      logger.info({ url }, "local Inngest engine listening");
      return { url };
    },
    async sync(appUrl, kind) {
      const core = await corePromise;
      await core.sync.sync(appUrl, kind);
    },
    clock: {
      now: () => clock.now(),
      async advance(ms) {
        await corePromise;
        clock.shift(ms);
        await drain();
      },
    },
    drain,
    async close() {
      if (closed) return;
      closed = true;
      const core = await corePromise.catch(() => undefined);
      if (server) {
        const closing = server;
        await new Promise<void>((resolve) => {
          closing.close(() => resolve());
          closing.closeAllConnections();
        });
      }
      if (!core) return;
      core.scheduler.stop();
      await core.executor.stop();
      await core.db.close();
    },
  };
}
