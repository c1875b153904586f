/**
 * The engine's notion of "now". Sleeps, wait timeouts, retries, cron, dedupe windows and
 * idempotency windows are all measured on it, so tests and demos can compress days into
 * seconds (`timeScale`) or stop time entirely (`timeScale: 0`) and move it by hand.
 */
export interface EngineClock {
  /** Virtual milliseconds that pass per real millisecond; 0 freezes time between `shift` calls. */
  readonly timeScale: number;
  nowMs(): number;
  now(): Date;
  /** Moves virtual time forward; the engine is told through `onShift` listeners. */
  shift(ms: number): void;
  onShift(listener: () => void): () => void;
  /** Real milliseconds until virtual time reaches `atMs`; Infinity when time is frozen. */
  realDelayUntil(atMs: number): number;
}

export function createEngineClock(options: { timeScale?: number; start?: Date } = {}): EngineClock {
  const timeScale = options.timeScale ?? 1;
  if (!Number.isFinite(timeScale) || timeScale < 0)
    throw new Error(`timeScale must be >= 0, got ${timeScale}`);
  const realStart = Date.now();
  const virtualStart = options.start?.getTime() ?? realStart;
  let offset = 0;
  const listeners = new Set<() => void>();

  const nowMs = (): number => Math.floor(virtualStart + (Date.now() - realStart) * timeScale + offset);

  return {
    timeScale,
    nowMs,
    now: () => new Date(nowMs()),
    shift(ms: number) {
      if (!(ms >= 0)) throw new Error(`clock can only move forward, got ${ms}`);
      offset += ms;
      for (const listener of listeners) listener();
    },
    onShift(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    realDelayUntil(atMs: number) {
      const remaining = atMs - nowMs();
      if (remaining <= 0) return 0;
      return timeScale === 0 ? Infinity : Math.ceil(remaining / timeScale);
    },
  };
}
