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

export function createDatabase(
  url: string,
  options: { maxConnections?: number; connectionTimeoutMs?: number } = {},
): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? defaultPoolSize,
    // 0 (pg's default) waits for a connection forever; a bound lets a busy service answer 503.
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 0,
    // The hot raw statements are named, so each connection parses them once; PostgreSQL would
    // also keep one generic plan for each from its sixth run, costed for the tables at their last
    // ANALYZE: made while `orders` held a page or two, that plan is a sequential scan, kept while
    // the table grows to thousands of rows. Planned on each run, a lookup by key uses its index.
    // Prisma's own statements are unnamed and planned on each run anyway. A SET on each new
    // connection, awaited before the pool hands it out, rather than the startup `options`
    // parameter, which PgBouncer and managed poolers refuse with a FATAL error; behind a
    // transaction pooler the setting may not follow a statement to its server session, and a
    // server that refuses it keeps the connection: either costs only this optimisation.
    onConnect: (client) =>
      client.query("SET plan_cache_mode = force_custom_plan").then(
        () => undefined,
        () => undefined,
      ),
  });
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
