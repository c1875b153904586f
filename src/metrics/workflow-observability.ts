import { Middleware } from "inngest";
import { withLogContext, type LogContext } from "../log-context";
import { maskEmailAddresses, type Logger } from "../logger";
import { secondsSince, type Metrics } from "./metrics";

type StepContext = Middleware.OnStepErrorArgs["ctx"];

/**
 * The order a run works on: the trigger's `data.orderId`, or for failure and cancellation
 * handlers (triggered by inngest/function.failed|cancelled) the original event's.
 */
function orderIdOf(event: unknown): string | undefined {
  const data = (
    event as { data?: { orderId?: unknown; event?: { data?: { orderId?: unknown } } } } | undefined
  )?.data;
  const orderId = data?.orderId ?? data?.event?.data?.orderId;
  return typeof orderId === "string" ? orderId : undefined;
}

function logContextOf(ctx: StepContext): LogContext {
  return { runId: ctx.runId, orderId: orderIdOf(ctx.event) };
}

/**
 * An Inngest middleware that counts and times every step attempt (`step.run`, `step.sendEvent`;
 * memoized replays are not attempts), logs each failed attempt with its order id and run id, and
 * runs the handler and its steps inside a log context so that every line they write carries both.
 *
 * Inngest builds a middleware instance per request from a no-argument class, so the metrics and
 * logger are closed over here.
 */
export interface FinalStepFailure {
  runId: string;
  orderId?: string;
  functionId: string;
  step: string;
  /** Attempts made, the failed one included. */
  attempts: number;
  error: string;
}

export function workflowObservability(deps: {
  metrics: Metrics;
  logger: Logger;
  /** Told when a step fails for good (the ops console shows it on the order's timeline). */
  onFinalStepFailure?: (failure: FinalStepFailure) => void;
}): Middleware.Class {
  const { metrics } = deps;
  const logger = deps.logger.child({ component: "workflow" });

  return class WorkflowObservability extends Middleware.BaseMiddleware {
    readonly id = "order-fulfillment:observability";

    /** The whole execution request, so the SDK's own lines (and ours) carry the ids too. */
    override async wrapRequest({
      fn,
      next,
      requestInfo,
      runId,
    }: Middleware.WrapRequestArgs): Promise<Middleware.Response> {
      if (fn === null || !runId) return next();
      const body = (await requestInfo.body().catch(() => undefined)) as { event?: unknown } | undefined;
      return withLogContext({ runId, orderId: orderIdOf(body?.event) }, () => next());
    }

    override async wrapStepHandler({
      ctx,
      fn,
      next,
      stepInfo,
    }: Middleware.WrapStepHandlerArgs): Promise<unknown> {
      const started = process.hrtime.bigint();
      try {
        const output = await withLogContext(logContextOf(ctx), () => next());
        metrics.observeStep(fn.id(), stepInfo.options.id, "completed");
        return output;
      } finally {
        metrics.observeStepDuration(fn.id(), stepInfo.options.id, secondsSince(started));
      }
    }

    override onStepError({ ctx, error, fn, isFinalAttempt, stepInfo }: Middleware.OnStepErrorArgs): void {
      const step = stepInfo.options.id;
      metrics.observeStep(fn.id(), step, isFinalAttempt ? "failed" : "retrying");
      const fields = {
        ...logContextOf(ctx),
        function: fn.id(),
        step,
        attempt: ctx.attempt,
        final: isFinalAttempt,
      };
      // The stack once, when the step fails for good; an attempt that will be retried is one line.
      if (isFinalAttempt) {
        logger.error({ ...fields, err: error }, "workflow step failed for good");
        deps.onFinalStepFailure?.({
          runId: ctx.runId,
          ...(fields.orderId ? { orderId: fields.orderId } : {}),
          functionId: fn.id(),
          step,
          attempts: ctx.attempt + 1,
          error: error instanceof Error ? error.message : String(error),
        });
      } else {
        logger.warn(
          {
            ...fields,
            error: maskEmailAddresses(
              error instanceof Error ? `${error.name}: ${error.message}` : String(error),
            ),
          },
          "workflow step failed; it will be retried",
        );
      }
    }
  };
}
