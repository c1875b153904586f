import { NonRetriableError, RetryAfterError, StepError } from "inngest";
import { Harness, type RunView } from "./fixtures/harness";

describe("local Inngest engine: steps, retries and failures", () => {
  let harness: Harness;
  let calls: Record<string, number[]> = {};
  const record = (key: string, attempt: number): number => {
    (calls[key] ??= []).push(attempt);
    return calls[key].length;
  };
  const failureEvents: unknown[] = [];

  beforeAll(async () => {
    harness = await Harness.start({
      functions: (inngest) => [
        inngest.createFunction(
          { id: "multi-step", triggers: [{ event: "test/multi" }] },
          async ({ event, step, attempt }) => {
            const a = await step.run("first", () => {
              record("first", attempt);
              return { n: (event.data as { n: number }).n + 1 };
            });
            const b = await step.run("second", () => {
              record("second", attempt);
              return a.n * 10;
            });
            const c = await step.run("third", () => `${b}!`);
            return { a, b, c };
          },
        ),
        inngest.createFunction(
          { id: "parallel", triggers: [{ event: "test/parallel" }] },
          async ({ step }) => {
            const results = await Promise.all(
              ["x", "y", "z"].map((id) =>
                step.run(`part-${id}`, () => {
                  record(`part-${id}`, 0);
                  return id.toUpperCase();
                }),
              ),
            );
            const joined = await step.run("join", () => results.join(""));
            return joined;
          },
        ),
        inngest.createFunction(
          { id: "flaky-step", retries: 3, triggers: [{ event: "test/flaky" }] },
          async ({ step, attempt }) => {
            return step.run("flaky", () => {
              const n = record("flaky", attempt);
              if (n < 3) throw new Error(`flaky failure ${n}`);
              return "ok after retries";
            });
          },
        ),
        inngest.createFunction(
          { id: "doomed-step", retries: 1, triggers: [{ event: "test/doomed" }] },
          async ({ step }) => {
            try {
              await step.run("always-fails", () => {
                record("always-fails", 0);
                throw new TypeError("card declined");
              });
              return "unreachable";
            } catch (error) {
              const compensation = await step.run("compensate", () => "refunded");
              return {
                caught: error instanceof StepError,
                name: (error as Error).name,
                message: (error as Error).message,
                compensation,
              };
            }
          },
        ),
        inngest.createFunction(
          {
            id: "broken",
            retries: 2,
            triggers: [{ event: "test/broken" }],
            onFailure: async ({ event, error }) => {
              failureEvents.push({ data: event.data, error: { name: error.name, message: error.message } });
              return "cleanup done";
            },
          },
          async ({ attempt }) => {
            record("broken", attempt);
            throw new Error("boom at function level");
          },
        ),
        inngest.createFunction(
          { id: "non-retriable", retries: 3, triggers: [{ event: "test/non-retriable" }] },
          async ({ step }) => {
            await step.run("refuse", () => {
              record("refuse", 0);
              throw new NonRetriableError("order is invalid");
            });
          },
        ),
        inngest.createFunction(
          { id: "retry-after", retries: 2, triggers: [{ event: "test/retry-after" }] },
          async ({ step }) => {
            return step.run("rate-limited", () => {
              const n = record("rate-limited", 0);
              if (n === 1) throw new RetryAfterError("slow down", "10m");
              return "done";
            });
          },
        ),
      ],
    });
  });

  beforeEach(() => {
    calls = {};
  });

  afterAll(async () => {
    await harness.stop();
  });

  test("runs a multi-step function to completion, each step once", async () => {
    const [eventId] = await harness.send({ name: "test/multi", data: { n: 1 } });
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toEqual({ a: { n: 2 }, b: 20, c: "20!" });
    expect(run.steps?.map((s) => [s.name, s.status, s.output])).toEqual([
      ["first", "Completed", { n: 2 }],
      ["second", "Completed", 20],
      ["third", "Completed", "20!"],
    ]);
    expect(calls).toEqual({ first: [0], second: [0] });
  });

  test("runs parallel steps (Promise.all) and continues once all of them reported", async () => {
    const [eventId] = await harness.send({ name: "test/parallel" });
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toBe("XYZ");
    expect(calls).toEqual({ "part-x": [0], "part-y": [0], "part-z": [0] });
    expect(run.steps?.map((s) => s.name).sort()).toEqual(["join", "part-x", "part-y", "part-z"]);
  });

  test("retries a step after StepError with backoff on the engine clock, then succeeds", async () => {
    const [eventId] = await harness.send({ name: "test/flaky" });
    await harness.engine.drain();
    expect(calls.flaky).toHaveLength(1);
    const [pending] = await harness.runsOf(eventId as string);
    expect(pending?.status).toBe("Running");

    await harness.engine.clock.advance(1_000);
    expect(calls.flaky).toHaveLength(2);
    await harness.engine.clock.advance(1_000);
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toBe("ok after retries");
    expect(calls.flaky).toEqual([0, 1, 2]);
  });

  test("a step that fails for good reaches the handler as a catchable StepError", async () => {
    const [eventId] = await harness.send({ name: "test/doomed" });
    await harness.engine.drain();
    await harness.engine.clock.advance(1_000);
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toEqual({
      caught: true,
      name: "TypeError",
      message: "card declined",
      compensation: "refunded",
    });
    expect(calls["always-fails"]).toHaveLength(2);
    const failedStep = run.steps?.find((s) => s.name === "always-fails");
    expect(failedStep?.status).toBe("Failed");
    expect(failedStep?.error).toMatchObject({ name: "TypeError", message: "card declined" });
  });

  test("a function error is retried, then fails the run and triggers onFailure with inngest/function.failed", async () => {
    const [eventId] = await harness.send({ name: "test/broken", data: { orderId: "o-1" } });
    await harness.engine.drain();
    await harness.engine.clock.advance(1_000);
    await harness.engine.clock.advance(1_000);
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Failed");
    expect(run.error).toMatchObject({ name: "Error", message: "boom at function level" });
    expect(calls.broken).toEqual([0, 1, 2]);

    const failures = await harness.runsOfFunction("engine-test-broken-failure");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({ status: "Completed", output: "cleanup done" });
    expect(failureEvents).toEqual([
      {
        data: {
          function_id: "engine-test-broken",
          run_id: run.run_id,
          error: expect.objectContaining({ name: "Error", message: "boom at function level" }),
          event: expect.objectContaining({ name: "test/broken", data: { orderId: "o-1" } }),
        },
        error: { name: "Error", message: "boom at function level" },
      },
    ]);
  });

  test("NonRetriableError fails the run without a retry", async () => {
    const [eventId] = await harness.send({ name: "test/non-retriable" });
    const run: RunView = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Failed");
    expect(run.error?.message).toContain("order is invalid");
    expect(calls.refuse).toHaveLength(1);
  });

  test("honours retry-after from RetryAfterError", async () => {
    const [eventId] = await harness.send({ name: "test/retry-after" });
    await harness.engine.drain();
    await harness.engine.clock.advance(5 * 60_000);
    expect(calls["rate-limited"]).toHaveLength(1);
    await harness.engine.clock.advance(5 * 60_000);
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(calls["rate-limited"]).toHaveLength(2);
  });
});
