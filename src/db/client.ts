import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client";

export type Database = PrismaClient;
export { Prisma } from "../generated/prisma/client";

export function createDatabase(url: string, options: { maxConnections?: number } = {}): Database {
  const adapter = new PrismaPg({ connectionString: url, max: options.maxConnections ?? 10 });
  return new PrismaClient({ adapter });
}
