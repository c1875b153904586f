/**
 * Five-field cron (minute hour day-of-month month day-of-week) evaluated in UTC on the engine
 * clock. Supports `*`, lists, ranges, steps, month/day names and the @hourly-style macros.
 * A `TZ=` prefix other than UTC is refused rather than silently evaluated in the wrong zone.
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

const macros: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *",
};

const monthNames = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const dayNames = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

interface FieldSpec {
  min: number;
  max: number;
  names?: string[];
  namesStartAt?: number;
}

const fieldSpecs: FieldSpec[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: monthNames, namesStartAt: 1 },
  { min: 0, max: 7, names: dayNames, namesStartAt: 0 },
];

function parseValue(text: string, spec: FieldSpec, source: string): number {
  const upper = text.toUpperCase();
  const nameIndex = spec.names?.indexOf(upper) ?? -1;
  if (nameIndex >= 0) return nameIndex + (spec.namesStartAt ?? 0);
  if (!/^\d+$/.test(text)) throw new CronError(source, `bad value "${text}"`);
  const value = Number(text);
  if (value < spec.min || value > spec.max)
    throw new CronError(source, `${value} is out of range ${spec.min}-${spec.max}`);
  return value;
}

function parseField(
  text: string,
  spec: FieldSpec,
  source: string,
): { values: Set<number>; wildcard: boolean } {
  const values = new Set<number>();
  for (const part of text.split(",")) {
    const [rangeText = "", stepText] = part.split("/");
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new CronError(source, `bad step in "${part}"`);
    let from: number;
    let to: number;
    if (rangeText === "*") {
      from = spec.min;
      to = spec.max;
    } else if (rangeText.includes("-")) {
      const [a = "", b = ""] = rangeText.split("-");
      from = parseValue(a, spec, source);
      to = parseValue(b, spec, source);
      if (from > to) throw new CronError(source, `empty range "${rangeText}"`);
    } else {
      from = parseValue(rangeText, spec, source);
      to = stepText === undefined ? from : spec.max;
    }
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return { values, wildcard: text === "*" };
}

export function parseCron(source: string): CronSchedule {
  let text = source.trim();
  const tz = /^(?:CRON_)?TZ=(\S+)\s+(.*)$/.exec(text);
  if (tz) {
    if (!["UTC", "Etc/UTC", "GMT"].includes(tz[1] ?? "")) {
      throw new CronError(source, `time zone ${tz[1]} is not supported by the local engine (UTC only)`);
    }
    text = tz[2] ?? "";
  }
  text = macros[text.toLowerCase()] ?? text;
  const parts = text.split(/\s+/);
  if (parts.length !== 5) throw new CronError(source, "expected 5 fields");
  const [minutes, hours, days, months, weekdays] = parts.map((part, i) =>
    parseField(part, fieldSpecs[i] as FieldSpec, source),
  );
  if (!minutes || !hours || !days || !months || !weekdays) throw new CronError(source, "expected 5 fields");
  if (weekdays.values.has(7)) weekdays.values.add(0);

  const dayMatches = (date: Date): boolean => {
    const dom = days.values.has(date.getUTCDate());
    const dow = weekdays.values.has(date.getUTCDay());
    // Classic cron: when both day fields are restricted, either may match.
    if (!days.wildcard && !weekdays.wildcard) return dom || dow;
    return dom && dow;
  };

  return {
    source,
    nextAfter(afterMs: number): number {
      const date = new Date(Math.floor(afterMs / 60_000) * 60_000 + 60_000);
      const limit = afterMs + 5 * 366 * 86_400_000;
      while (date.getTime() <= limit) {
        if (!months.values.has(date.getUTCMonth() + 1)) {
          date.setUTCMonth(date.getUTCMonth() + 1, 1);
          date.setUTCHours(0, 0, 0, 0);
          continue;
        }
        if (!dayMatches(date)) {
          date.setUTCDate(date.getUTCDate() + 1);
          date.setUTCHours(0, 0, 0, 0);
          continue;
        }
        if (!hours.values.has(date.getUTCHours())) {
          date.setUTCHours(date.getUTCHours() + 1, 0, 0, 0);
          continue;
        }
        if (!minutes.values.has(date.getUTCMinutes())) {
          date.setUTCMinutes(date.getUTCMinutes() + 1, 0, 0);
          continue;
        }
        return date.getTime();
      }
      throw new CronError(source, "never fires");
    },
    latestAtOrBefore(atMs: number): number | undefined {
      const date = new Date(Math.floor(atMs / 60_000) * 60_000);
      const limit = atMs - 5 * 366 * 86_400_000;
      // Walks backwards field by field, skipping whole months, days and hours that cannot match.
      const back = (toStartOf: (d: Date) => void): void => {
        toStartOf(date);
        date.setTime(date.getTime() - 60_000);
      };
      while (date.getTime() >= limit) {
        if (!months.values.has(date.getUTCMonth() + 1)) {
          back((d) => {
            d.setUTCDate(1);
            d.setUTCHours(0, 0, 0, 0);
          });
          continue;
        }
        if (!dayMatches(date)) {
          back((d) => {
            d.setUTCHours(0, 0, 0, 0);
          });
          continue;
        }
        if (!hours.values.has(date.getUTCHours())) {
          back((d) => {
            d.setUTCMinutes(0, 0, 0);
          });
          continue;
        }
        if (!minutes.values.has(date.getUTCMinutes())) {
          date.setTime(date.getTime() - 60_000);
          continue;
        }
        return date.getTime();
      }
      return undefined;
    },
  };
}
