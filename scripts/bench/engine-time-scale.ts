/**
 * Virtual ms per real ms on the local engine's clock in `npm run bench:orders`: the 14-day
 * delivery wait passes in 0.12 s, the 3-day sleep in 0.03 s. At a billion the clock passed the
 * year 9999 about 250 s into a run (from 2026); the engine's statements carry times as JSON's ISO
 * strings, which then read "+010000-…", a form PostgreSQL refuses ("time zone displacement out of
 * range"): every checkpoint and every event the app sent failed from then on, so the app's webhook
 * answered 500 (shop/order.placed not accepted) and runs stopped progressing. At ten million the
 * year 9999 is about 7 hours of run away.
 */
export const engineTimeScale = 1e7;

/** The last instant whose ISO string PostgreSQL reads (a four-digit year). */
const lastReadableMs = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Real seconds until an engine clock at `timeScale`, started at `startMs`, passes the year 9999. */
export function engineClockLimitSeconds(timeScale: number, startMs = Date.now()): number {
  return (lastReadableMs - startMs) / timeScale / 1000;
}
