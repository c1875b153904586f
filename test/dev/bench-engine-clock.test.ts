import { createEngineClock } from "../../src/dev/inngest-engine";
import { engineClockLimitSeconds, engineTimeScale } from "../../scripts/bench/engine-time-scale";

// The benchmark's engine writes its clock's times into PostgreSQL as ISO strings; past the year
// 9999 they read "+010000-…", which PostgreSQL refuses, and every checkpoint and event failed.
describe("the engine clock of bench:orders", () => {
  const start = Date.UTC(2026, 11, 2);

  it("stays within the year 9999 for a run of two hours", () => {
    expect(engineClockLimitSeconds(engineTimeScale, start)).toBeGreaterThan(2 * 3600);
    const clock = createEngineClock({ timeScale: engineTimeScale, start: new Date(start) });
    const afterTwoHours = new Date(clock.nowMs() + 2 * 3600 * 1000 * engineTimeScale);
    expect(afterTwoHours.toISOString()).toMatch(/^\d{4}-/);
  });

  it("passes a 14-day wait in under a second of run", () => {
    expect((14 * 24 * 3600 * 1000) / engineTimeScale).toBeLessThan(1000);
  });

  it("names the limit a billion had: about 250 s into a run", () => {
    expect(engineClockLimitSeconds(1e9, start)).toBeLessThan(260);
    expect(new Date(start + 260 * 1000 * 1e9).toISOString()).toMatch(/^\+01\d{4}-/);
  });
});
