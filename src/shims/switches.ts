/**
 * Which shims are on. All are, always, in the service; `scripts/bench-shims.ts` switches one off in a
 * benchmark process of its own to re-measure what it buys (docs/benchmarks.md). Each shim asks
 * here when it is installed or called, so a process measures the libraries' own path without any
 * other change.
 */
export type ShimName =
  "express-entry" | "pino-redaction-primitives" | "inngest-cached-headers" | "buffered-response";

const switchedOff = new Set<ShimName>();

export function isShimOn(name: ShimName): boolean {
  return !switchedOff.has(name);
}

/** For a benchmark process only: the named shims fall back to the library's own behaviour. */
export function switchShimsOffForMeasurement(names: readonly ShimName[]): void {
  for (const name of names) switchedOff.add(name);
}
