import { Cron, type CronOptions } from "croner";

/**
 * Five-field cron (minute hour day-of-month month day-of-week), as Inngest takes it, with an
 * optional `TZ=<IANA zone>` prefix, evaluated on the engine clock. Parsing and the fire times are
 * croner's (a maintained, dependency-free cron library): `*`, lists, ranges, steps, month and day
 * names, the @hourly-style macros, and classic cron's rule that with both day fields restricted
 * either may match (croner's legacy mode, its default). Six- or seven-field patterns (seconds,
 * years) are refused: Inngest's crons have five.
 */
export class CronError extends Error {
  constructor(expression: string, reason: string) {
    super(`Unsupported cron "${expression}": ${reason}`);
    this.name = "CronError";
  }
}

export interface CronSchedule {
  source: string;
  /** The first fire time strictly after `afterMs`. */
  nextAfter(afterMs: number): number;
  /**
   * The latest fire time at or before `atMs` (undefined if none in the 5 years before it),
   * computed directly: catching up after a long gap costs the same as after a short one.
   */
  latestAtOrBefore(atMs: number): number | undefined;
}

const utcZones = new Set(["UTC", "Etc/UTC", "GMT", "Etc/GMT"]);
const fiveYearsMs = 5 * 366 * 86_400_000;

/**
 * croner computes no fire time at or after the year 3000 for a pattern that runs every year (its
 * search stops there), yet a clock at 10⁹ times real time (the benchmarks') passes that year half
 * a minute after it starts. The Gregorian calendar repeats exactly every 400 years (146,097 days,
 * a whole number of weeks), and time zones have no rules beyond their last one, so a time past
 * 2400 is moved back by whole cycles into 2000–2400, computed there and moved forward again:
 * the same fire times, at any distance. Times before 2400 are computed as they are.
 */
const cycleMs = 146_097 * 86_400_000;
const cycleBase = Date.UTC(2000, 0, 1);
const foldFrom = cycleBase + cycleMs;

function cyclesToFold(atMs: number): number {
  return atMs < foldFrom ? 0 : Math.floor((atMs - cycleBase) / cycleMs);
}

export function parseCron(source: string): CronSchedule {
  let pattern = source.trim();
  let zone: string | undefined;
  const tz = /^(?:CRON_)?TZ=(\S+)\s+(.*)$/.exec(pattern);
  if (tz) {
    zone = tz[1] ?? "";
    pattern = tz[2] ?? "";
  }
  if (!pattern.startsWith("@") && pattern.split(/\s+/).length !== 5) {
    throw new CronError(source, "expected 5 fields");
  }
  if (zone !== undefined && !utcZones.has(zone)) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: zone });
    } catch {
      throw new CronError(source, `unknown time zone ${zone}`);
    }
  }
  // A fixed zero offset is several times cheaper in croner than the "UTC" zone (no Intl per date).
  const options: CronOptions =
    zone === undefined || utcZones.has(zone)
      ? { paused: true, mode: "5-part", utcOffset: 0 }
      : { paused: true, mode: "5-part", timezone: zone };
  let cron: Cron;
  try {
    cron = new Cron(pattern, options);
  } catch (error) {
    throw new CronError(source, error instanceof Error ? error.message : String(error));
  }
  if (cron.nextRun(new Date(0)) === null) throw new CronError(source, "never fires");

  return {
    source,
    nextAfter(afterMs) {
      const shift = cyclesToFold(afterMs) * cycleMs;
      const next = cron.nextRun(new Date(afterMs - shift));
      if (!next) throw new CronError(source, "never fires");
      return next.getTime() + shift;
    },
    latestAtOrBefore(atMs) {
      const shift = cyclesToFold(atMs) * cycleMs;
      const at = atMs - shift;
      // croner counts a run earlier in the reference's own second: 1 ms later makes `atMs` itself count.
      const [latest] = cron.previousRuns(1, new Date(at + 1));
      return latest && latest.getTime() >= at - fiveYearsMs ? latest.getTime() + shift : undefined;
    },
  };
}
