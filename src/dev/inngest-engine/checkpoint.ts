import { createHash, timingSafeEqual } from "node:crypto";
import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import type { KeyedMutex } from "../../shared/keyed-mutex";
import type { RunStore, StepRecord } from "./run-store";
import type { Job, RunContext } from "./types";

/**
 * Inngest's "async checkpointing" (SDK v4 default): given `ctx.fn_id` and `ctx.qi_id` on a
 * discovery call, the SDK runs steps back to back inside that one request and POSTs each result
 * to `/v1/checkpoint/:runId/async` while the call is still open. Mirrors Inngest's
 * `pkg/execution/checkpoint/checkpoint.go` (`checkpointAsyncSteps`, `validateAsyncDispatch`).
 */

/** One HTTP call to the app that is in flight; a checkpoint names it by `qi_id`. */
export interface Dispatch {
  job: Job;
  run: RunContext;
  /** Changes on every HTTP attempt of the job, like Inngest's queue-item generation. */
  generation: number;
  requestId: string;
}

/** Inngest skips the stale-dispatch check for requests younger than this. */
const dispatchValidationSkipMs = 10_000;

/** Inngest sends the function's internal UUID; ours is derived from the function id. */
export function internalFunctionId(functionId: string): string {
  const hex = createHash("sha1").update(`inngest-local-engine:fn:${functionId}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Inngest's qi_id is opaque to the SDK (base64 of `jobID::shardID`); so is ours. */
export function queueItemRef(jobId: string): string {
  return Buffer.from(`${jobId}::local`).toString("base64");
}

function decodeQueueItemRef(ref: unknown): string | undefined {
  if (typeof ref !== "string" || ref === "") return undefined;
  const [jobId, shard] = Buffer.from(ref, "base64").toString("utf8").split("::");
  return shard === "local" && jobId && /^\d+$/.test(jobId) ? jobId : undefined;
}

/** The bearer the SDK sends: `signkey-<env>-` + sha256 of the hex-decoded key (`hashSigningKey`). */
export function hashedSigningKey(signingKey: string): string {
  const prefix = /^signkey-\w+-/.exec(signingKey)?.[0] ?? "";
  const key = signingKey.slice(prefix.length);
  return `${prefix}${createHash("sha256").update(key, "hex").digest("hex")}`;
}

interface CheckpointOp {
  id?: unknown;
  op?: unknown;
  name?: unknown;
  displayName?: unknown;
  data?: unknown;
  opts?: { type?: unknown } | null;
  timing?: { a?: unknown; b?: unknown } | null;
}

export interface CheckpointBody {
  run_id?: unknown;
  fn_id?: unknown;
  qi_id?: unknown;
  generation_id?: unknown;
  request_started_at?: unknown;
  steps?: unknown;
}

/** The SDK's `timing` is `{a: start ns since epoch, b: duration ns}`. */
export function stepTiming(timing: CheckpointOp["timing"]): Pick<StepRecord, "startedAt" | "durationMs"> {
  if (!timing || typeof timing.a !== "number" || typeof timing.b !== "number") return {};
  return { startedAt: new Date(Math.floor(timing.a / 1e6)).toISOString(), durationMs: timing.b / 1e6 };
}

export class Checkpoints {
  /** Calls in flight, by job id. */
  private readonly dispatches = new Map<string, Dispatch>();
  private nextGeneration = Date.now();
  private readonly expectedBearer: Buffer | undefined;
  /** Checkpoint POSTs accepted since start (for benchmarks and tests). */
  accepted = 0;

  constructor(
    private readonly deps: {
      logger: Logger;
      runs: RunStore;
      runLocks: KeyedMutex;
      signingKey?: string;
    },
  ) {
    this.expectedBearer = deps.signingKey
      ? Buffer.from(`Bearer ${hashedSigningKey(deps.signingKey)}`)
      : undefined;
  }

  /** Registers a call about to be sent; the returned function unregisters it. */
  open(job: Job, run: RunContext, requestId: string): { dispatch: Dispatch; close: () => void } {
    const dispatch: Dispatch = { job, run, generation: ++this.nextGeneration, requestId };
    this.dispatches.set(job.id, dispatch);
    return {
      dispatch,
      close: () => {
        if (this.dispatches.get(job.id) === dispatch) this.dispatches.delete(job.id);
      },
    };
  }

  /** With a signing key, the SDK's bearer must match it (as Inngest's API checks). */
  authorize(authorization: string | undefined): void {
    if (!this.expectedBearer) return;
    const given = Buffer.from(authorization ?? "");
    if (given.length !== this.expectedBearer.length || !timingSafeEqual(given, this.expectedBearer))
      throw new AppError("unauthorized", "Missing or wrong signing key");
  }

  /** `POST /v1/checkpoint/:runId/async`: memoise the steps, reset the job's attempts. */
  async accept(runId: string, body: CheckpointBody, nowMs: number, now: Date): Promise<void> {
    if (!Array.isArray(body.steps))
      throw new AppError("validation_failed", "Expected {run_id, fn_id, qi_id, steps: [...]}");
    const ops = body.steps as CheckpointOp[];
    const results: StepRecord[] = [];
    for (const op of ops) {
      if (typeof op?.id !== "string" || typeof op.op !== "string")
        throw new AppError("validation_failed", "Every step needs an id and an op");
      if (op.op === "StepPlanned") continue; // informational: Inngest only opens a span
      if (op.op !== "StepRun" && op.op !== "Step")
        throw new AppError("validation_failed", `cannot checkpoint opcode: ${op.op}`);
      const name =
        typeof op.displayName === "string" ? op.displayName : typeof op.name === "string" ? op.name : null;
      results.push({
        id: op.id,
        name,
        op: op.opts?.type === "step.sendEvent" ? "SendEvent" : "StepRun",
        result: { data: op.data ?? null },
        ...stepTiming(op.timing),
      });
    }
    const jobId = decodeQueueItemRef(body.qi_id);
    await this.deps.runLocks.run(runId, async () => {
      this.validateDispatch(runId, body, jobId, nowMs);
      const saved = await this.deps.runs.checkpointSteps({ runId, jobId, results, now });
      if (!saved.found) throw new AppError("not_found", `No running run ${runId}`);
      const dispatch = jobId ? this.dispatches.get(jobId) : undefined;
      // The call's eventual answer is applied on top of what was checkpointed meanwhile.
      if (dispatch && dispatch.run.id === runId) {
        for (const result of results)
          if (!dispatch.run.steps.has(result.id)) dispatch.run.steps.set(result.id, result.result);
        dispatch.job.attempt = 0;
      }
    });
    this.accepted++;
  }

  /**
   * Inngest's `validateAsyncDispatch`: 409 when the job's current dispatch is not the one the
   * checkpoint comes from. Inngest skips the queue lookup for requests younger than 10 s (an
   * optimisation); this engine knows its dispatches in memory, so a different generation in
   * flight is refused at any age: a request the engine gave up on (timeout, restart) must not
   * keep running steps beside the new dispatch of the same job.
   */
  private validateDispatch(
    runId: string,
    body: CheckpointBody,
    jobId: string | undefined,
    nowMs: number,
  ): void {
    const generation = typeof body.generation_id === "number" ? body.generation_id : 0;
    if (generation === 0 || !jobId) return;
    const dispatch = this.dispatches.get(jobId);
    if (dispatch && dispatch.run.id === runId && dispatch.generation !== generation)
      throw new AppError(
        "conflict",
        `Stale dispatch: generation ${generation} does not match queue item generation ${dispatch.generation}`,
      );
    if (dispatch) return;
    const startedAt = typeof body.request_started_at === "number" ? body.request_started_at : 0;
    const elapsed = nowMs - startedAt;
    if (startedAt !== 0 && elapsed >= 0 && elapsed < dispatchValidationSkipMs) return;
    throw new AppError("conflict", "Stale dispatch: queue item not found");
  }
}
