import { createEngineClock } from "../../../src/dev/inngest-engine";
import { parseCron } from "../../../src/dev/inngest-engine/cron";
import { Harness } from "./fixtures/harness";

/** The cron catch-up computes the latest due fire instead of walking to it one fire at a time. */
describe("cron: the latest due fire, computed directly", () => {
  const expressions = [
    "*/5 * * * *",
    "0 * * * *",
    "30 2 * * *",
    "15 9 * * MON-FRI",
    "0 0 1 * *",
    "0 12 1,15 * 3",
    "0 0 29 2 *",
    "@weekly",
  ];
  const start = Date.UTC(2026, 0, 1);

  test.each(expressions)("%s: latestAtOrBefore agrees with nextAfter at many instants", (source) => {
    const cron = parseCron(source);
    // Deterministic instants spread over four years, at odd seconds.
    for (let i = 0; i < 200; i++) {
      const at = start + ((i * 7_919_993_117) % (4 * 365 * 86_400_000)) + (i % 60) * 1000;
      const latest = cron.latestAtOrBefore(at);
      expect(latest).toBeDefined();
      expect(latest as number).toBeLessThanOrEqual(at);
      expect(cron.nextAfter(latest as number)).toBeGreaterThan(at);
      expect(cron.nextAfter((latest as number) - 1)).toBe(latest);
    }
  });

  test("an exact fire time is its own latest fire", () => {
    const cron = parseCron("*/5 * * * *");
    const fire = Date.UTC(2026, 5, 1, 10, 35);
    expect(cron.latestAtOrBefore(fire)).toBe(fire);
    expect(cron.latestAtOrBefore(fire - 1)).toBe(fire - 5 * 60_000);
  });
});

describe("cron scheduler at a huge time scale (a virtual day per real 0.1 ms)", () => {
  let harness: Harness;
  const fires: number[] = [];

  beforeAll(async () => {
    harness = await Harness.start({
      clock: createEngineClock({ timeScale: 1e9 }),
      engine: { cronMinRealIntervalMs: 200 },
      functions: (inngest) => [
        inngest.createFunction(
          { id: "every-5-min", triggers: [{ cron: "*/5 * * * *" }] },
          async ({ event }) => {
            fires.push(event.ts ?? 0);
            return "swept";
          },
        ),
        inngest.createFunction({ id: "ping", triggers: [{ event: "test/ping" }] }, async ({ step }) =>
          step.run("pong", () => "pong"),
        ),
      ],
    });
  });
  afterAll(async () => {
    await harness.stop();
  });

  test("fires the latest due time only, coalescing missed fires, and the engine stays responsive", async () => {
    for (let i = 0; i < 500 && fires.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fires.length).toBeGreaterThanOrEqual(3);
    const seen = [...fires];
    for (const ts of seen) expect(ts % (5 * 60_000)).toBe(0);
    // Missed fires are not replayed: consecutive fires are far more than 5 virtual minutes apart.
    for (let i = 1; i < seen.length; i++)
      expect((seen[i] as number) - (seen[i - 1] as number)).toBeGreaterThan(24 * 3600_000);

    const [eventId] = await harness.send({ name: "test/ping" });
    let status = "Running";
    for (let i = 0; i < 500 && status !== "Completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      status = (await harness.runsOf(eventId as string))[0]?.status ?? "Running";
    }
    expect(status).toBe("Completed");
  });
});
