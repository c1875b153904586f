import { parseDurationMs } from "../../shared/duration";

/*
 * Durations as the SDK writes them (parsed by src/shared/duration.ts); sleeps may instead carry
 * an ISO date (`sleepUntil`), and retry-after may be seconds or a date.
 */

/** A sleep's `name`: either a duration from now or an absolute ISO timestamp. */
export function sleepWakeAtMs(name: string, nowMs: number): number | undefined {
  const duration = parseDurationMs(name);
  if (duration !== undefined) return nowMs + duration;
  const at = Date.parse(name);
  return Number.isNaN(at) ? undefined : at;
}

/** `retry-after` may be seconds (HTTP), an SDK duration ("30s") or a date. */
export function retryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const duration = parseDurationMs(header);
  if (duration !== undefined) return duration;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
