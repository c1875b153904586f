import type { Logger } from "../../logger";
import type { EngineClock } from "./clock";
import type { RunStore, StepRecord } from "./run-store";
import type { SerializedError } from "./types";

/** An event the engine itself emits, as Inngest does for failures and cancellations. */
export interface InternalEvent {
  name: string;
  data: Record<string, unknown>;
}

/**
 * Ends runs. Callers emit the returned event after releasing the run's lock, so emitting
 * (which may lock other runs) can never wait on a lock held further up the stack.
 */
export class RunLifecycle {
  constructor(
    private readonly runs: RunStore,
    private readonly clock: EngineClock,
    private readonly logger: Logger,
  ) {}

  async complete(runId: string, output: unknown, results: StepRecord[] = []): Promise<void> {
    const ended = await this.runs.finishRun(
      runId,
      "Completed",
      { output: output ?? null, results },
      this.clock.now(),
    );
    if (ended) this.logger.debug({ runId, functionId: ended.functionId }, "run completed");
  }

  /** `inngest/function.failed` is what triggers the SDK's `<app>-<fn>-failure` handler. */
  async fail(
    runId: string,
    error: SerializedError,
    results: StepRecord[] = [],
  ): Promise<InternalEvent | undefined> {
    const ended = await this.runs.finishRun(runId, "Failed", { error, results }, this.clock.now());
    if (!ended) return undefined;
    this.logger.info({ runId, functionId: ended.functionId, error: error.message }, "run failed");
    return {
      name: "inngest/function.failed",
      data: {
        function_id: ended.functionId,
        run_id: runId,
        error: { name: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) },
        event: ended.event,
      },
    };
  }

  /** A cancelled run emits `inngest/function.cancelled` and never `inngest/function.failed`. */
  async cancel(
    runId: string,
    cause: { reason: string; byEvent?: string },
  ): Promise<InternalEvent | undefined> {
    const ended = await this.runs.finishRun(runId, "Cancelled", {}, this.clock.now());
    if (!ended) return undefined;
    this.logger.info({ runId, functionId: ended.functionId, ...cause }, "run cancelled");
    return {
      name: "inngest/function.cancelled",
      data: {
        function_id: ended.functionId,
        run_id: runId,
        event: ended.event,
      },
    };
  }
}
