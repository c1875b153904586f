/**
 * Durations as the SDK writes them: `timeStr()` output such as "1w2d3h4m5s", plus "500ms"
 * and plain numbers of milliseconds. Sleeps may instead carry an ISO date (`sleepUntil`).
 */
const unitMs: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

export function parseDurationMs(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return 0;
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const pattern = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/gy;
  let total = 0;
  let consumed = 0;
  for (const match of trimmed.matchAll(pattern)) {
    total += Number(match[1]) * (unitMs[match[2] ?? ""] ?? NaN);
    consumed += match[0].length;
  }
  return consumed === trimmed.length && Number.isFinite(total) ? total : undefined;
}

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
