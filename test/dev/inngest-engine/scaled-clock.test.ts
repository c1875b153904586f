import { createEngineClock } from "../../../src/dev/inngest-engine";
import { Harness } from "./fixtures/harness";

describe("local Inngest engine: a running, scaled clock", () => {
  let harness: Harness;
  let flakyCalls = 0;

  beforeAll(async () => {
    harness = await Harness.start({
      // One real millisecond is one virtual minute: timers must fire by themselves.
      clock: createEngineClock({ timeScale: 60_000 }),
      engine: { retryBackoff: (attempt) => attempt * 60_000 },
      functions: (inngest) => [
        inngest.createFunction({ id: "nap", triggers: [{ event: "test/nap" }] }, async ({ step }) => {
          await step.sleep("nap", "3h");
          return "rested";
        }),
        inngest.createFunction({ id: "flaky", triggers: [{ event: "test/flaky" }] }, async ({ step }) => {
          return step.run("flaky", () => {
            flakyCalls++;
            if (flakyCalls < 3) throw new Error("not yet");
            return "finally";
          });
        }),
      ],
    });
  });

  afterAll(async () => {
    await harness.stop();
  });

  test("sleeps end on their own as virtual time passes", async () => {
    const [eventId] = await harness.send({ name: "test/nap" });
    const deadline = Date.now() + 5_000;
    let status = "Running";
    while (status === "Running" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = (await harness.runsOf(eventId as string))[0]?.status ?? "Running";
    }
    expect(status).toBe("Completed");
  });

  test("drain() waits for retries while the clock runs", async () => {
    const [eventId] = await harness.send({ name: "test/flaky" });
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
    expect(flakyCalls).toBe(3);
  });
});
