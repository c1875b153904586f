import type { Logger } from "../../logger";
import { AppUnreachableError, type AppClient } from "./app-client";
import { callBody, callUrl, interpretResponse, normalizeError, type CallOutcome } from "./call-protocol";
import { internalFunctionId, queueItemRef, stepTiming, type Checkpoints } from "./checkpoint";
import { ulid } from "./ids";
import type { EngineClock } from "./clock";
import type { KeyedMutex } from "../../shared/keyed-mutex";
import type { ConcurrencyLimiter } from "./concurrency";
import { parseDurationMs } from "../../shared/duration";
import { retryAfterMs, sleepWakeAtMs } from "./durations";
import { compileExpression } from "./expressions";
import type { EventIntake } from "./intake";
import type { InternalEvent, RunLifecycle } from "./lifecycle";
import type { FunctionRegistry } from "./registry";
import type { NewJob, RunStore, StepRecord } from "./run-store";
import type { Job, RunContext, SdkOp, SerializedError } from "./types";

export interface ExecutorOptions {
  /** Jobs executed at once (HTTP calls in flight, roughly). */
  maxConcurrentJobs: number;
  /** Virtual ms to wait before retry `attempt` (1-based) unless the app sent `retry-after`. */
  retryBackoff: (attempt: number) => number;
  /** Real ms an unreachable app is retried without spending attempts (covers an app restart). */
  unreachableGraceMs: number;
  /** Send `fn_id`/`qi_id` on discovery calls so the SDK checkpoints (Inngest's default path). */
  checkpointing: boolean;
}

interface Next {
  continueWith?: Job;
  /** The run as it stands for `continueWith`; undefined: keep the current context. */
  run?: RunContext;
  emit?: InternalEvent[];
}

/** Inngest-like exponential backoff, shortened for development: 1 s, 2 s, 4 s ... capped at 1 min. */
export function defaultRetryBackoff(attempt: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempt - 1), 60_000);
}

/**
 * Executes claimed jobs. A call job keeps going on the same run for as long as the run has
 * exactly one next thing to do (the sequential case), so a typical step costs one HTTP call
 * and one SQL statement; parallel steps, sleeps and waits go back through the queue.
 */
export class Executor {
  /** Jobs counted against maxConcurrentJobs (those waiting for a concurrency slot are not). */
  active = 0;
  private readonly tasks = new Set<Promise<void>>();
  /** What each task is executing now: its lease is renewed, and no claim takes it over. */
  private readonly executing = new Set<{ job: Job }>();
  private leaseRenewal: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly stopWaiters = new Set<() => void>();

  constructor(
    private readonly deps: {
      logger: Logger;
      clock: EngineClock;
      runs: RunStore;
      registry: FunctionRegistry;
      app: AppClient;
      limiter: ConcurrencyLimiter;
      runLocks: KeyedMutex;
      checkpoints: Checkpoints;
      lifecycle: RunLifecycle;
      intake: EventIntake;
      /** New work is due now: claim it. */
      wake: () => void;
      /** A job stopped counting against maxConcurrentJobs. */
      capacityFreed: () => void;
      noteTimer: (at: Date) => void;
    },
    private readonly options: ExecutorOptions,
  ) {}

  get capacity(): number {
    return this.stopping ? 0 : this.options.maxConcurrentJobs - this.active;
  }

  get busy(): boolean {
    return this.tasks.size > 0;
  }

  /** Ids of the jobs this process's tasks are executing. */
  heldJobIds(): string[] {
    return [...this.executing].map((entry) => entry.job.id);
  }

  /**
   * Keeps the leases of executing jobs alive (a third of the lease apart). A job whose task ended
   * without handing it back, because the database refused the release, stops being renewed, so
   * its lease runs out and the next claim takes it: nothing stays claimed by nobody.
   */
  private renewLeasesWhileBusy(): void {
    if (this.leaseRenewal) return;
    this.leaseRenewal = setInterval(
      () => {
        const held = this.heldJobIds();
        if (held.length === 0) return;
        this.deps.runs
          .renewLeases(held)
          .catch((error: unknown) => this.deps.logger.debug({ err: error }, "renewing job leases failed"));
      },
      Math.max(10, this.deps.runs.leaseMs / 3),
    );
    this.leaseRenewal.unref();
  }

  /** Executes a claimed job; a call job may come with its run, loaded when it was claimed. */
  start(job: Job, run?: RunContext): void {
    this.active++;
    // The job this task is executing: a call job moves on to the run's next call (created
    // claimed by the statement that consumed the previous one), so after an unexpected error
    // it is this one, not the job the task started with (long deleted), that must go back to
    // the queue. Releasing the wrong one left the current call claimed by nothing, forever.
    const executing = { job };
    this.executing.add(executing);
    this.renewLeasesWhileBusy();
    const task: Promise<void> = this.execute(executing, run)
      .catch(async (error: unknown) => {
        if (this.stopping) return;
        const failed = executing.job;
        this.deps.logger.error(
          { err: error, jobId: failed.id, runId: failed.runId },
          "job failed unexpectedly; retrying later",
        );
        const retryAt = new Date(this.deps.clock.nowMs() + 5_000);
        await this.deps.runs
          .releaseJob(failed.id, retryAt)
          .then(() => this.deps.noteTimer(retryAt))
          .catch((releaseError: unknown) =>
            this.deps.logger.warn(
              { err: releaseError, jobId: failed.id, runId: failed.runId },
              "could not release job; it is claimable again when its lease runs out",
            ),
          );
      })
      .finally(() => {
        this.executing.delete(executing);
        this.tasks.delete(task);
        this.active--;
        this.deps.capacityFreed();
      });
    this.tasks.add(task);
  }

  /** Aborts calls in flight and waits for every task to notice; their jobs stay in PostgreSQL. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.leaseRenewal) clearInterval(this.leaseRenewal);
    for (const wake of this.stopWaiters) wake();
    this.deps.app.abortAll();
    await Promise.allSettled([...this.tasks]);
  }

  private async execute(executing: { job: Job }, claimedRun: RunContext | undefined): Promise<void> {
    const job = executing.job;
    let current: Job | undefined = job;
    let run: RunContext | undefined = claimedRun;
    if (job.kind !== "call") ({ discovery: current, run } = await this.resolveTimer(job));
    else run ??= await this.deps.runs.loadRun(job.runId);
    while (current && !this.stopping) {
      executing.job = current;
      if (!run || run.status !== "Running") {
        await this.deps.runs.deleteJob(current.id);
        return;
      }
      const outcome = await this.call(run, current);
      if (outcome.kind === "stopped") return;
      const runNow: RunContext = run;
      const jobNow: Job = current;
      const next: Next = await this.deps.runLocks.run(run.id, () => this.apply(runNow, jobNow, outcome));
      if (next.emit) await this.deps.intake.emit(next.emit);
      current = next.continueWith;
      if (next.run) run = next.run;
    }
  }

  /** A sleep ended or a wait timed out: memoise `null` and continue the run. */
  private async resolveTimer(job: Job): Promise<{ discovery?: Job; run?: RunContext }> {
    return this.deps.runLocks.run(job.runId, () =>
      this.deps.runs.advanceRun({
        jobId: job.id,
        runId: job.runId,
        results: [
          {
            id: job.stepId,
            name: job.stepName,
            op: job.kind === "sleep" ? "Sleep" : "WaitForEvent",
            result: { data: null },
          },
        ],
        newJobs: [],
        now: this.deps.clock.now(),
        claimDiscovery: true,
        loadRunWithDiscovery: true,
      }),
    );
  }

  private async call(run: RunContext, job: Job): Promise<CallOutcome> {
    const fn = this.deps.registry.get(run.functionId);
    if (!fn) {
      return {
        kind: "error",
        retriable: false,
        error: { name: "Error", message: `Function "${run.functionId}" is not synced with the local engine` },
      };
    }
    const url = callUrl(fn.url, fn.id, job.stepId);
    // Like Inngest: discovery calls checkpoint; planned steps and step retries run one step.
    const checkpointing = this.options.checkpointing && job.stepId === "step";
    let unreachableSince: number | undefined;
    for (let failures = 0; ; failures++) {
      const release = await this.acquireSlots(run);
      // Every HTTP attempt is a new dispatch with its own generation (a stale one gets 409).
      const requestId = ulid(Date.now());
      const { dispatch, close } = this.deps.checkpoints.open(job, run, requestId);
      let failure: string;
      try {
        if (this.stopping) return { kind: "stopped" };
        const body = callBody(
          run,
          job,
          checkpointing
            ? {
                fnId: internalFunctionId(fn.id),
                qiId: queueItemRef(job.id),
                requestId,
                generation: dispatch.generation,
              }
            : undefined,
        );
        const headers: Record<string, string> = checkpointing
          ? { "x-request-id": requestId, "x-inngest-generation-id": String(dispatch.generation) }
          : {};
        const response = await this.deps.app.request("POST", url, body, headers);
        // A proxy in front of a restarting app answers 502-504; that is "unreachable" too.
        if (![502, 503, 504].includes(response.status)) return interpretResponse(response);
        failure = `HTTP ${response.status} from ${new URL(url).origin}`;
      } catch (error) {
        if (!(error instanceof AppUnreachableError) || this.stopping) {
          if (this.stopping) return { kind: "stopped" };
          throw error;
        }
        failure = error.message;
      } finally {
        close();
        release();
      }
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince >= this.options.unreachableGraceMs) {
        return { kind: "error", retriable: true, error: { name: "AppUnreachableError", message: failure } };
      }
      if (failures === 0)
        this.deps.logger.warn(
          { runId: run.id, failure },
          "app unreachable; retrying without spending an attempt",
        );
      await this.pause(Math.min(250 * 2 ** failures, 5_000));
    }
  }

  private async acquireSlots(run: RunContext): Promise<() => void> {
    if (run.concurrency.length === 0) return () => undefined;
    // Waiting for a slot does not count against maxConcurrentJobs, so other keys keep flowing.
    this.active--;
    this.deps.capacityFreed();
    try {
      return await this.deps.limiter.acquire(run.concurrency);
    } finally {
      this.active++;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.stopWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stopWaiters.add(done);
    });
  }

  private async apply(
    run: RunContext,
    job: Job,
    outcome: Exclude<CallOutcome, { kind: "stopped" }>,
  ): Promise<Next> {
    switch (outcome.kind) {
      case "completed":
        await this.deps.lifecycle.complete(run.id, outcome.output);
        return {};
      case "error": {
        const attempt = job.attempt + 1;
        if (outcome.retriable && attempt < run.maxAttempts) {
          const runAt = this.retryAt(attempt, outcome.retryAfter);
          this.deps.logger.info(
            {
              runId: run.id,
              functionId: run.functionId,
              attempt,
              retryAt: runAt,
              error: outcome.error.message,
            },
            "function errored; retrying",
          );
          return this.advance(
            run,
            job,
            [],
            [{ kind: "call", stepId: job.stepId, stepName: job.stepName, attempt, runAt }],
          );
        }
        const notice = await this.deps.lifecycle.fail(run.id, outcome.error);
        return { emit: notice ? [notice] : [] };
      }
      case "ops":
        return this.applyOps(run, job, outcome.ops, outcome.retryAfter);
    }
  }

  private retryAt(attempt: number, retryAfter: string | undefined): Date {
    const nowMs = this.deps.clock.nowMs();
    return new Date(nowMs + (retryAfterMs(retryAfter, nowMs) ?? this.options.retryBackoff(attempt)));
  }

  private async applyOps(
    run: RunContext,
    job: Job,
    ops: SdkOp[],
    retryAfter: string | undefined,
  ): Promise<Next> {
    const nowMs = this.deps.clock.nowMs();
    const results: StepRecord[] = [];
    const newJobs: NewJob[] = [];
    const failStep = (op: SdkOp, name: string | null, message: string): void => {
      results.push({ id: op.id, name, op: op.op, result: { error: { name: "Error", message } } });
    };
    for (const op of ops) {
      const name = op.displayName ?? op.name ?? null;
      switch (op.op) {
        case "StepRun":
          results.push({
            id: op.id,
            name,
            op: op.opts?.type === "step.sendEvent" ? "SendEvent" : "StepRun",
            result: { data: op.data ?? null },
            ...stepTiming(op.timing),
          });
          break;
        case "StepFailed":
          results.push({ id: op.id, name, op: op.op, result: { error: stepError(op) } });
          break;
        case "StepError": {
          const attempt = job.attempt + 1;
          if (attempt >= run.maxAttempts) {
            results.push({ id: op.id, name, op: "StepFailed", result: { error: stepError(op) } });
          } else {
            this.deps.logger.info(
              { runId: run.id, step: name, attempt, error: op.error?.message },
              "step errored; retrying",
            );
            newJobs.push({
              kind: "call",
              stepId: op.id,
              stepName: name,
              attempt,
              runAt: this.retryAt(attempt, retryAfter),
            });
          }
          break;
        }
        case "StepPlanned":
          if (!run.steps.has(op.id))
            newJobs.push({ kind: "call", stepId: op.id, stepName: name, attempt: 0, runAt: new Date(nowMs) });
          break;
        case "Sleep": {
          const wakeAt = sleepWakeAtMs(op.name ?? "", nowMs);
          if (wakeAt === undefined) failStep(op, name, `Cannot read sleep duration "${op.name}"`);
          else
            newJobs.push({
              kind: "sleep",
              stepId: op.id,
              stepName: name,
              attempt: 0,
              runAt: new Date(wakeAt),
            });
          break;
        }
        case "WaitForEvent": {
          const wait = this.waitJob(op, name, nowMs);
          if (typeof wait === "string") failStep(op, name, wait);
          else newJobs.push(wait);
          break;
        }
        case "RunComplete":
          await this.deps.lifecycle.complete(run.id, op.data ?? null, results);
          return {};
        default:
          failStep(op, name, `${op.op} is not supported by the local Inngest engine`);
      }
    }
    return this.advance(run, job, results, newJobs);
  }

  private waitJob(op: SdkOp, name: string | null, nowMs: number): NewJob | string {
    const eventName = op.name;
    const timeout = typeof op.opts?.timeout === "string" ? parseDurationMs(op.opts.timeout) : undefined;
    const expression = typeof op.opts?.if === "string" ? op.opts.if : undefined;
    if (!eventName) return "waitForEvent without an event name";
    if (timeout === undefined) return `Cannot read waitForEvent timeout "${String(op.opts?.timeout)}"`;
    if (expression) {
      try {
        compileExpression(expression);
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    }
    this.deps.intake.noteWait(eventName);
    return {
      kind: "wait",
      stepId: op.id,
      stepName: name,
      attempt: 0,
      runAt: new Date(nowMs + timeout),
      eventName,
      expression,
    };
  }

  private async advance(run: RunContext, job: Job, results: StepRecord[], newJobs: NewJob[]): Promise<Next> {
    const now = this.deps.clock.now();
    // After a planned step, siblings may have written results this context has not seen: the
    // discovery that follows gets the run as stored.
    const sequential = job.stepId === "step";
    const advanced = await this.deps.runs.advanceRun({
      jobId: job.id,
      runId: run.id,
      results,
      newJobs,
      now,
      claimDiscovery: true,
      loadRunWithDiscovery: !sequential,
    });
    if (!advanced.found) return {};
    for (const result of results) run.steps.set(result.id, result.result);
    for (const queuedJob of advanced.queued) {
      if (queuedJob.runAt.getTime() <= now.getTime()) this.deps.wake();
      else this.deps.noteTimer(queuedJob.runAt);
    }
    return { continueWith: advanced.discovery, run: advanced.run };
  }
}

function stepError(op: SdkOp): SerializedError {
  return normalizeError(op.error, `Step "${op.displayName ?? op.id}" failed`);
}
