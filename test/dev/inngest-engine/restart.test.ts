import { Harness } from "./fixtures/harness";

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(5);
  }
}

describe("local Inngest engine: restarts", () => {
  let harness: Harness;
  const executed: Record<string, number> = {};
  const bump = (key: string): void => {
    executed[key] = (executed[key] ?? 0) + 1;
  };
  let releaseGate: () => void = () => undefined;
  let gate = new Promise<void>((resolve) => (releaseGate = resolve));

  beforeAll(async () => {
    harness = await Harness.start({
      // Without a grace period an unreachable app would spend the single attempt at once.
      engine: { appUnreachableGraceMs: 30_000 },
      functions: (inngest) => [
        inngest.createFunction(
          { id: "interrupted", triggers: [{ event: "test/interrupted" }] },
          async ({ step }) => {
            await step.run("one", () => bump("interrupted.one"));
            await step.run("two", async () => {
              bump("interrupted.two");
              await gate;
            });
            await step.run("three", () => bump("interrupted.three"));
            return "finished";
          },
        ),
        inngest.createFunction(
          { id: "sleeps-across-restart", triggers: [{ event: "test/sleep-restart" }] },
          async ({ step }) => {
            await step.run("one", () => bump("sleeps.one"));
            await step.sleep("nap", "1h");
            await step.run("two", () => bump("sleeps.two"));
            return "rested";
          },
        ),
        inngest.createFunction(
          { id: "single-attempt", retries: 0, triggers: [{ event: "test/app-down" }] },
          async ({ step }) => {
            await step.run("only", () => bump("single.only"));
            return "survived the app restart";
          },
        ),
      ],
    });
  });

  afterAll(async () => {
    await harness.stop();
  });

  test("an engine restart mid-step re-calls the pending step but never re-runs memoised ones", async () => {
    const [eventId] = await harness.send({ name: "test/interrupted" });
    await until(() => executed["interrupted.two"] === 1, "step two to start");

    await harness.engine.close();
    releaseGate();
    await harness.startEngine();
    const run = await harness.onlyRunOf(eventId as string);

    expect(run.status).toBe("Completed");
    expect(run.output).toBe("finished");
    expect(executed["interrupted.one"]).toBe(1);
    // The interrupted step's result was lost with the engine, so it ran again (at-least-once).
    expect(executed["interrupted.two"]).toBe(2);
    expect(executed["interrupted.three"]).toBe(1);
  });

  test("a sleep survives an engine restart", async () => {
    const [eventId] = await harness.send({ name: "test/sleep-restart" });
    await harness.engine.drain();
    await harness.engine.close();
    await harness.startEngine();
    await harness.engine.clock.advance(3_600_000);
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(executed["sleeps.one"]).toBe(1);
    expect(executed["sleeps.two"]).toBe(1);
  });

  test("calls to an app that is down are retried without spending attempts until it is back", async () => {
    const functions = harness.appFunctions;
    await harness.stopApp();
    const [eventId] = await harness.send({ name: "test/app-down" });
    await pause(600);
    expect(executed["single.only"]).toBeUndefined();
    await harness.startApp(functions, Number(new URL(harness.appUrl).port));
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(run.output).toBe("survived the app restart");
    expect(executed["single.only"]).toBe(1);
  });

  afterEach(() => {
    gate = new Promise<void>((resolve) => (releaseGate = resolve));
  });
});
