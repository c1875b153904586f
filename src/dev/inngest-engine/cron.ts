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
      const next = cron.nextRun(new Date(afterMs));
      if (!next) throw new CronError(source, "never fires");
      return next.getTime();
    },
    latestAtOrBefore(atMs) {
      // croner counts a run earlier in the reference's own second: 1 ms later makes `atMs` itself count.
      const [latest] = cron.previousRuns(1, new Date(atMs + 1));
      return latest && latest.getTime() >= atMs - fiveYearsMs ? latest.getTime() : undefined;
    },
  };
}
