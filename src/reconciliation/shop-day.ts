import { AppError } from "../errors";

/** A calendar day in the shop's time zone, and the instants it starts and ends at. */
export interface ShopDay {
  /** YYYY-MM-DD */
  date: string;
  timeZone: string;
  start: Date;
  /** Exclusive: the next day's start. */
  end: Date;
}

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** How far `timeZone`'s wall clock is ahead of UTC at `instant`, in ms. */
function offsetMs(instant: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(new Date(instant));
  const field = (type: string) => Number(parts.find((part) => part.type === type)?.value);
  const wall = Date.UTC(
    field("year"),
    field("month") - 1,
    field("day"),
    field("hour"),
    field("minute"),
    field("second"),
  );
  return wall - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant a wall-clock midnight happens in `timeZone`. Intl has no inverse of formatToParts,
 * so: take the offset at the UTC midnight, step back by it, and take the offset again there
 * (a DST change between the two instants moves the answer by the difference).
 */
function midnight(year: number, month: number, day: number, timeZone: string): Date {
  const utcMidnight = Date.UTC(year, month - 1, day);
  const first = utcMidnight - offsetMs(utcMidnight, timeZone);
  const second = utcMidnight - offsetMs(first, timeZone);
  return new Date(second);
}

/** Parses YYYY-MM-DD (a real calendar date) into the shop's day; refuses anything else. */
export function shopDay(date: unknown, timeZone: string): ShopDay {
  const match = typeof date === "string" ? datePattern.exec(date) : null;
  const [year, month, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (
    !match ||
    calendar.getUTCFullYear() !== year ||
    calendar.getUTCMonth() !== month - 1 ||
    calendar.getUTCDate() !== day
  ) {
    throw new AppError(
      "validation_failed",
      `date: expected a calendar day as YYYY-MM-DD, got ${String(date)}`,
    );
  }
  const next = new Date(calendar.getTime() + 86_400_000);
  return {
    date: date as string,
    timeZone,
    start: midnight(year, month, day, timeZone),
    end: midnight(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), timeZone),
  };
}

/** The shop's calendar date at `instant`. */
export function dateIn(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", {
    timeZone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(instant);
}

/** The day before the shop's today: what the daily cron reconciles. */
export function previousShopDay(now: Date, timeZone: string): ShopDay {
  const today = shopDay(dateIn(now, timeZone), timeZone);
  return shopDay(dateIn(new Date(today.start.getTime() - 1), timeZone), timeZone);
}
