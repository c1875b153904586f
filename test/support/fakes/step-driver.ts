import { NonRetriableError, StepError, type InngestFunction } from "inngest";
import { errors } from "inngest/internals";
import { compileExpression } from "../../../src/dev/inngest-engine/expressions";

/**
 * Runs an Inngest function's handler in-process, without an engine, for the fast tier of workflow
 * tests (test/workflow-fast) and mutation testing. The thinnest driver that keeps the semantics the
 * saga relies on, as Inngest's executor and the v4 SDK have them (the team notes' inngest-v4.md; docs/checkpointing.md):
 * - an id used a second time in one pass of the handler is made unique as the SDK makes it
 *   (engine.js `resolveStepIdCollision`: `id:1`, `id:2`, …), so code that reaches a step twice runs
 *   it twice, as in production, instead of finding the first one's memo;
 * - `step.run`: memoised by id for the rest of the run; its result goes through JSON (`undefined`
 *   becomes `null`, a Date a string); a throwing step is retried up to the function's `retries`
 *   (a `NonRetriableError` is not), and once it fails for good the handler sees a `StepError`
 *   (catchable, `name` the original error's, `cause` deserialised);
 * - a handler that throws anything else is re-run (replaying memoised steps) up to `retries` times;
 *   a `NonRetriableError` or an uncaught `StepError` fails the run at once;
 * - `step.sleep` returns at once (recorded with its duration), `step.waitForEvent` resolves with the
 *   scripted event when its name (an event type's, for a typed contract) and `if` expression match (CEL, as Inngest evaluates it), else
 *   `null`, as on timeout;
 * - `onFailure` is called as Inngest calls it, with `inngest/function.failed`'s data;
 * - `step.sendEvent`: memoised by id like a step; the events it sent are its record's `detail`
 *   (through JSON), and it answers their ids as Inngest does.
 *
 * Why not `@inngest/test` (1.0.0, the maintained kit): with inngest 4.24 a step that fails ends its
 * run instead of reaching the handler as a StepError (its mocked step state always has a `data`
 * promise, which the engine takes as success: engine.js "typeof result.data !== 'undefined'"), so
 * no compensation path can run; a mocked `waitForEvent` fails with "Event not found in triggers";
 * and it cannot call `onFailure`. Those are half the paths these tests are for.
 */

export interface DriverOptions {
  /** Events for `step.waitForEvent`, by step id; none, or one that does not match, is a timeout. */
  events?: Record<string, { name: string; data: Record<string, unknown> }>;
  runId?: string;
  /**
   * Step results already in the run's history, by step id (a run in flight across a deploy): found
   * as Inngest finds a memoised step, never run (and not in `steps`).
   */
  memoised?: Record<string, unknown>;
}

export interface StepRecord {
  id: string;
  kind: "run" | "sleep" | "waitForEvent" | "sendEvent";
  /** run: attempts made; sleep: the duration; waitForEvent: its options; sendEvent: the events sent. */
  detail: unknown;
}

export type RunOutcome =
  | { status: "completed"; result: unknown; steps: StepRecord[]; runId: string }
  | { status: "failed"; error: Error; steps: StepRecord[]; runId: string };

type Handler = (ctx: unknown) => Promise<unknown>;
type FailureHandler = (ctx: unknown) => Promise<unknown>;

interface FunctionInternals {
  opts: { id: string; retries?: number };
  fn: Handler;
  onFailureFn?: FailureHandler;
  client: { id: string };
}

type Memo = { data: unknown } | { error: errors.SerializedError };

const isNonRetriable = (error: unknown) =>
  error instanceof NonRetriableError || (error instanceof Error && error.name === "NonRetriableError");

function serialize(error: unknown): errors.SerializedError {
  return errors.serializeError(error instanceof Error ? error : new Error(String(error)));
}

function internalsOf(fn: InngestFunction.Any): FunctionInternals {
  return fn as unknown as FunctionInternals;
}

/** Runs `fn` for `event` to its end (completed or failed for good). */
export async function runFunction(
  fn: InngestFunction.Any,
  event: { name: string; data: Record<string, unknown> },
  options: DriverOptions = {},
): Promise<RunOutcome> {
  const internals = internalsOf(fn);
  const retries = internals.opts.retries ?? 3;
  const runId = options.runId ?? `run-${Math.random().toString(36).slice(2, 10)}`;
  const memo = new Map<string, Memo>(
    Object.entries(options.memoised ?? {}).map(([id, data]) => [id, { data }]),
  );
  const steps: StepRecord[] = [];
  const triggerEvent = { ...event, id: `evt-${runId}`, ts: Date.now() };
  /** The ids used in this pass of the handler, and the next suffix of each. */
  let used = new Map<string, number>();
  const unique = (id: string) => {
    const next = used.get(id);
    used.set(id, (next ?? 0) + 1);
    return next === undefined ? id : `${id}:${next}`;
  };

  const step = {
    run: async (userId: string, body: () => unknown) => {
      const id = unique(userId);
      let state = memo.get(id);
      if (!state) {
        let attempt = 0;
        for (;;) {
          attempt += 1;
          try {
            const value = await body();
            state = { data: value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown) };
            break;
          } catch (error) {
            if (isNonRetriable(error) || attempt > retries) {
              state = { error: serialize(error) };
              break;
            }
          }
        }
        memo.set(id, state);
        steps.push({ id, kind: "run", detail: attempt });
      }
      if ("error" in state) throw new StepError(id, state.error);
      return state.data;
    },
    sleep: async (userId: string, duration: string) => {
      const id = unique(userId);
      if (!memo.has(id)) {
        memo.set(id, { data: null });
        steps.push({ id, kind: "sleep", detail: duration });
      }
    },
    sendEvent: async (userId: string, payload: { id?: string } | { id?: string }[]) => {
      const id = unique(userId);
      if (!memo.has(id)) {
        const sent = (Array.isArray(payload) ? payload : [payload]).map(
          (event) => JSON.parse(JSON.stringify(event)) as { id?: string },
        );
        memo.set(id, { data: { ids: sent.map((event, index) => event.id ?? `${id}-${index}`) } });
        steps.push({ id, kind: "sendEvent", detail: sent });
      }
      return (memo.get(id) as { data: unknown }).data;
    },
    waitForEvent: async (
      userId: string,
      waitFor: { event: string | { name: string }; timeout: string; if?: string },
    ) => {
      const id = unique(userId);
      if (!memo.has(id)) {
        // As the SDK sends it to Inngest: an event type (a contract) goes by its name.
        const opts = {
          ...waitFor,
          event: typeof waitFor.event === "string" ? waitFor.event : waitFor.event.name,
        };
        const candidate = options.events?.[id];
        const matches =
          candidate !== undefined &&
          candidate.name === opts.event &&
          (opts.if === undefined ||
            compileExpression(opts.if).matches({ event: triggerEvent, async: candidate }));
        memo.set(id, { data: matches ? { ...candidate, id: `evt-${id}`, ts: Date.now() } : null });
        steps.push({ id, kind: "waitForEvent", detail: opts });
      }
      return (memo.get(id) as { data: unknown }).data;
    },
  };

  for (let attempt = 0; ; attempt++) {
    used = new Map();
    try {
      const result = await internals.fn({
        event: triggerEvent,
        events: [triggerEvent],
        step,
        runId,
        attempt,
      });
      return { status: "completed", result: result ?? null, steps, runId };
    } catch (error) {
      const failedForGood = isNonRetriable(error) || error instanceof StepError || attempt >= retries;
      if (failedForGood) {
        const failure = error instanceof Error ? error : new Error(String(error));
        used = new Map();
        await internals.onFailureFn?.({
          event: {
            name: "inngest/function.failed",
            data: {
              function_id: `${internals.client.id}-${internals.opts.id}`,
              run_id: runId,
              error: serialize(failure),
              event: triggerEvent,
            },
          },
          error: failure,
          runId: `${runId}-failure`,
          step,
        });
        return { status: "failed", error: failure, steps, runId };
      }
    }
  }
}
