import type { Timeline } from "../timeline/timeline";

/** Errors are kept to this many characters on the timeline (the full one is in the logs and Inngest). */
const errorLength = 2000;

/**
 * A run's failures on its order's timeline: ops find them in the console (a failed step with its
 * attempts, the "failed" filter). Each is written once per (order, kind, run).
 */
export function createRunFailures(timeline: Pick<Timeline, "recordMany">) {
  return {
    /** A step that failed for good, with how many attempts it took. */
    async stepFailed(failure: {
      runId: string;
      orderId?: string;
      step: string;
      attempts: number;
      error: string;
    }) {
      if (!failure.orderId) return;
      await timeline.recordMany([
        {
          orderId: failure.orderId,
          kind: "step-failed",
          runId: failure.runId,
          detail: {
            step: failure.step,
            attempts: failure.attempts,
            error: failure.error.slice(0, errorLength),
          },
        },
      ]);
    },

    /** A run that failed for good (what its onFailure handler reports). */
    async runFailed(failure: {
      runId: string;
      orderId?: string;
      functionId: string;
      error: { message: string };
    }) {
      if (!failure.orderId) return;
      await timeline.recordMany([
        {
          orderId: failure.orderId,
          kind: "run-failed",
          runId: failure.runId,
          detail: { functionId: failure.functionId, error: failure.error.message.slice(0, errorLength) },
        },
      ]);
    },
  };
}
