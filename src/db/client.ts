import { createHash } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client";

export type Database = PrismaClient;
export { Prisma } from "../generated/prisma/client";

/** Connections per process when DATABASE_POOL_SIZE is not set. */
export const defaultPoolSize = 10;

/** pg-pool's message when no connection came free within `connectionTimeoutMs`. */
export const poolTimeoutMessage = "timeout exceeded when trying to connect";

const pools = new WeakMap<Database, pg.Pool>();

/**
 * Rows `orders` holds (at its last ANALYZE) from which a connection may keep generic plans: a
 * lookup by key on a table this size reads its index, so a plan made now stays right as it grows.
 */
export const genericPlansFromOrders = 1000;

/** How long a pooled connection lives before it is replaced (and decides its plan mode again). */
const connectionLifetimeSeconds = 15 * 60;

/**
 * The session's plan_cache_mode from the size of `orders`: `force_custom_plan` while it is small or
 * never analysed (reltuples -1), or missing; PostgreSQL's default `auto` after.
 */
export const planCacheModeStatement = `SELECT set_config('plan_cache_mode',
  CASE WHEN coalesce((SELECT reltuples FROM pg_class WHERE oid = to_regclass('orders')), -1) >= $1
       THEN 'auto' ELSE 'force_custom_plan' END, false)`;

const statementNames = new Map<string, string>();

/**
 * A prepared statement's name from its text: the same text, the same name, on every connection.
 * Remembered per text, so a hot statement is hashed once per process, not on every run; the texts
 * are the code's own constants (values go as parameters), so the map holds a few dozen.
 */
export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s_${createHash("sha1").update(text).digest("base64url").slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return name;
}

/**
 * The app's raw statements with parameters (`pool.query(text, values)`) go out named after their
 * text: each connection parses one once and, with plan_cache_mode `auto` (above), PostgreSQL keeps
 * a generic plan for it from its sixth run when that plan costs no more than the custom ones. Most
 * of PostgreSQL's extra time per order over the I/O floor was planning these statements on every
 * run (decision 0202). Prisma's statements (config objects) and a transaction's client are left
 * as they are.
 */
function nameStatementsByText(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((text: unknown, values?: unknown, callback?: unknown) =>
    typeof text === "string" && Array.isArray(values) && callback === undefined
      ? query({ name: statementName(text), text, values })
      : query(text, values, callback)) as typeof pool.query;
}

export function createDatabase(
  url: string,
  options: { maxConnections?: number; connectionTimeoutMs?: number } = {},
): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? defaultPoolSize,
    // 0 (pg's default) waits for a connection forever; a bound lets a busy service answer 503.
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 0,
    // A connection decides its plan_cache_mode when it opens (below): one opened while `orders`
    // was small would plan every run for as long as steady traffic keeps it busy. Retired after
    // this long (between queries), its successor decides again; one reconnect per connection.
    maxLifetimeSeconds: connectionLifetimeSeconds,
    // The hot raw statements are named, so each connection parses them once, and PostgreSQL keeps
    // one generic plan for each from its sixth run (PL/pgSQL triggers and foreign-key checks keep
    // theirs the same way), costed for the tables at their last ANALYZE. One made while `orders`
    // held a page or two is a sequential scan, kept while the table grows to thousands of rows
    // (decision 0141). So a connection opened while `orders` is small plans every run for the
    // table as it is; once it holds `genericPlansFromOrders` rows an index is the cheaper plan for
    // a lookup by key whatever it grows to, and generic plans save the planning (decision 0202).
    // One statement, awaited before the pool hands the connection out, rather than the startup
    // `options` parameter, which PgBouncer and managed poolers refuse with a FATAL error; behind a
    // transaction pooler the setting may not follow a statement to its server session, and a
    // server that refuses it keeps the connection: either costs only this optimisation.
    onConnect: (client) =>
      client.query(planCacheModeStatement, [genericPlansFromOrders]).then(
        () => undefined,
        () => undefined,
      ),
  });
  nameStatementsByText(pool);
  // An idle connection the server closed is dropped by the pool; without a listener the 'error'
  // it emits would end the process. Prisma adds its own once it connects.
  pool.on("error", () => undefined);
  const db = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(db, pool);
  return db;
}

/**
 * The `pg` pool under a client made by createDatabase: Prisma and hot raw statements share its
 * connections. Hot paths use it where Prisma's per-query cost shows in a profile
 * (docs/benchmarks.md); everything else stays on Prisma.
 */
export function sqlPool(db: Database): pg.Pool {
  const pool = pools.get(db);
  if (!pool) throw new Error("sqlPool: this client was not made by createDatabase");
  return pool;
}
