import { createEngineClock } from "../../../src/dev/inngest-engine";
import { parseCron } from "../../../src/dev/inngest-engine/cron";
import { Harness, type RunView } from "./fixtures/harness";

/**
 * The benchmarks run the engine's clock at 10⁹ times real time: half a minute after start it is
 * past the year 3000, and a minute later past 4000. Crons must keep firing there, and due jobs
 * must keep being claimed.
 */
describe("cron: fire times far in the future", () => {
  const expressions = [
    "*/5 * * * *",
    "0 * * * *",
    "15 9 * * MON-FRI",
    "0 0 29 2 *",
    "TZ=Europe/Paris 30 2 * * *",
  ];

  test.each(expressions)("%s: the same fire times in 2026 + 400·n years as in 2026", (source) => {
    const cron = parseCron(source);
    const cycleMs = 146_097 * 86_400_000;
    const base = Date.UTC(2026, 2, 14, 7, 3, 11);
    for (const cycles of [1, 3, 5, 20]) {
      const shift = cycles * cycleMs;
      expect(cron.nextAfter(base + shift)).toBe(cron.nextAfter(base) + shift);
      expect(cron.latestAtOrBefore(base + shift)).toBe((cron.latestAtOrBefore(base) as number) + shift);
    }
  });

  test("fire times at and after the year 3000 follow the pattern", () => {
    const cron = parseCron("*/5 * * * *");
    for (const year of [3000, 3926, 12_000]) {
      const at = Date.UTC(year, 0, 1, 0, 2, 30);
      expect(cron.nextAfter(at)).toBe(Date.UTC(year, 0, 1, 0, 5, 0));
      expect(cron.latestAtOrBefore(at)).toBe(Date.UTC(year, 0, 1, 0, 0, 0));
    }
  });
});

describe("engine: past the year 3000 the crons fire again and due jobs are still claimed", () => {
  let harness: Harness;
  const fires: number[] = [];

  beforeAll(async () => {
    harness = await Harness.start({
      clock: createEngineClock({ timeScale: 0, start: new Date(Date.UTC(2999, 11, 31, 22, 0)) }),
      functions: (inngest) => [
        inngest.createFunction(
          { id: "every-5-min", triggers: [{ cron: "*/5 * * * *" }] },
          async ({ event }) => {
            fires.push(event.ts ?? 0);
            return "swept";
          },
        ),
        inngest.createFunction({ id: "nap", triggers: [{ event: "test/nap" }] }, async ({ step }) => {
          await step.run("before", () => "before");
          await step.sleep("nap", "1h");
          return step.run("after", () => "after");
        }),
      ],
    });
  });
  afterAll(async () => {
    await harness.stop();
  });

  /** Polls the run's status (the engine's drain would wait forever on an engine that stopped claiming). */
  async function statusAfterPolling(runId: string, wanted: RunView["status"]): Promise<string> {
    let status = "";
    for (let i = 0; i < 400 && status !== wanted; i++) {
      status = (await harness.run(runId)).status;
      if (status !== wanted) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return status;
  }

  test("a sleep due when a cron fires in the year 3000 wakes, and the cron fires again", async () => {
    const [eventId] = await harness.send({ name: "test/nap" });
    await harness.engine.drain();
    const [run] = await harness.runsOf(eventId as string);
    expect(run?.status).toBe("Running");

    // To 3000-01-01T00:30: the sleep is due, and the cron's latest due fire is in the year 3000.
    harness.clock.shift(2.5 * 3_600_000);
    expect(await statusAfterPolling((run as RunView).run_id, "Completed")).toBe("Completed");
    for (let i = 0; i < 400 && fires.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fires.map((ts) => new Date(ts).toISOString())).toEqual(["3000-01-01T00:30:00.000Z"]);

    // A second fire, computed from a last fire in the year 3000.
    harness.clock.shift(3_600_000);
    for (let i = 0; i < 400 && fires.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fires.map((ts) => new Date(ts).toISOString())).toEqual([
      "3000-01-01T00:30:00.000Z",
      "3000-01-01T01:30:00.000Z",
    ]);

    const [later] = await harness.send({ name: "test/nap" });
    await harness.engine.drain();
    harness.clock.shift(3_600_000);
    const [laterRun] = await harness.runsOf(later as string);
    expect(await statusAfterPolling((laterRun as RunView).run_id, "Completed")).toBe("Completed");
  });
});
