import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client";

export type Database = PrismaClient;
export { Prisma } from "../generated/prisma/client";

/** Connections per process when DATABASE_POOL_SIZE is not set. */
export const defaultPoolSize = 10;

/** pg-pool's message when no connection came free within `connectionTimeoutMs`. */
export const poolTimeoutMessage = "timeout exceeded when trying to connect";

export function createDatabase(
  url: string,
  options: { maxConnections?: number; connectionTimeoutMs?: number } = {},
): Database {
  const adapter = new PrismaPg({
    connectionString: url,
    max: options.maxConnections ?? defaultPoolSize,
    // 0 (pg's default) waits for a connection forever; a bound lets a busy service answer 503.
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 0,
  });
  return new PrismaClient({ adapter });
}
