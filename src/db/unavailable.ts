import { poolTimeoutMessage } from "./client";

/**
 * The one answer to "does this error mean the database is not there for us right now?", for
 * both data paths: Prisma's model API (its P-codes, and the driver adapter's error underneath)
 * and raw statements on the `pg` pool (PostgreSQL's SQLSTATEs, Node's socket errors, pg-pool's
 * own messages). The HTTP error handler turns a yes into 503 `database_unavailable` with
 * Retry-After on every route; nothing else needs to know these codes.
 */

/**
 * PostgreSQL SQLSTATEs (https://www.postgresql.org/docs/current/errcodes-appendix.html):
 * class 08 connection exceptions; 53300 too_many_connections; 55000 is what a connection to a
 * database with ALLOW_CONNECTIONS false (taken out of service) gets; 57P01 admin_shutdown (the
 * server is stopping, or the session was terminated), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up, or in recovery).
 */
const postgresCodes = new Set([
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "53300",
  "55000",
  "57P01",
  "57P02",
  "57P03",
]);

/** Node's socket errors as pg raises them when the server cannot be reached or went away. */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
]);

/**
 * Prisma's codes (https://www.prisma.io/docs/orm/reference/error-reference): P1001 can't reach
 * the server, P1002 reached it but timed out, P1008 operation timed out, P1017 the server closed
 * the connection, P2024 no connection from the pool in time, P2028 the transaction could not
 * start in time, P2037 too many connections.
 */
const prismaCodes = new Set(["P1001", "P1002", "P1008", "P1017", "P2024", "P2028", "P2037"]);

/** The kinds @prisma/adapter-pg gives a DriverAdapterError's cause for the same situations. */
const adapterKinds = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
]);

/** pg and pg-pool raise these as plain Errors, without a code. */
const messages = [
  poolTimeoutMessage,
  "Connection terminated unexpectedly",
  "Connection terminated due to connection timeout",
  "Unable to start a transaction",
];

function said(error: object): boolean {
  const { code, originalCode, kind } = error as { code?: unknown; originalCode?: unknown; kind?: unknown };
  for (const value of [code, originalCode]) {
    if (
      typeof value === "string" &&
      (postgresCodes.has(value) || socketCodes.has(value) || prismaCodes.has(value))
    )
      return true;
  }
  if (typeof kind === "string" && adapterKinds.has(kind)) return true;
  if (kind === "postgres" && typeof code === "string" && postgresCodes.has(code)) return true;
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" && messages.some((text) => message.includes(text));
}

/** The errors a failure may be wrapped in: `cause` chains, Prisma's meta, an AggregateError's list. */
function wrapped(error: object): unknown[] {
  const inner: unknown[] = [(error as { cause?: unknown }).cause];
  const meta = (error as { meta?: { driverAdapterError?: unknown } }).meta;
  if (meta && typeof meta === "object") inner.push(meta.driverAdapterError);
  if (error instanceof AggregateError) inner.push(...(error.errors as unknown[]));
  return inner;
}

export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<object>();
  const pending: unknown[] = [error];
  while (pending.length > 0 && seen.size < 20) {
    const next = pending.shift();
    if (typeof next !== "object" || next === null || seen.has(next)) continue;
    seen.add(next);
    if (said(next)) return true;
    pending.push(...wrapped(next));
  }
  return false;
}

/** Seconds a client is asked to wait before retrying while the database is unavailable. */
export const databaseRetryAfterSeconds = 2;
