const unitMs: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Milliseconds in a duration as Inngest writes them ("30s", "14d", "1w2d3h4m5s", "500ms") or a
 * plain number of milliseconds; undefined when the text is not one.
 */
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

/** Milliseconds in a duration that config.ts has already validated ("30s", "1h", "14d"). */
export function durationMs(value: string): number {
  const ms = parseDurationMs(value);
  if (ms === undefined) throw new Error(`Not a duration: ${value}`);
  return ms;
}
