const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** Milliseconds in a duration such as "30s", "1h" or "14d" (the format config.ts accepts). */
export function durationMs(value: string): number {
  const match = /^(\d+)(ms|s|m|h|d|w)$/.exec(value);
  if (!match) throw new Error(`Not a duration: ${value}`);
  return Number(match[1]) * unitMs[match[2] as keyof typeof unitMs];
}
