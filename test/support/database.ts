import { randomBytes } from "node:crypto";
import { Client } from "pg";
import { createDatabase, type Database } from "../../src/db/client";
import { adminDatabaseUrl, databaseUrl, templateDatabaseName } from "./env";

export interface TestDatabase {
  name: string;
  url: string;
  /** A Prisma client on this database; closed by drop(). */
  db: Database;
  drop(): Promise<void>;
}

async function withAdmin<T>(fn: (admin: Client) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

/**
 * A fresh, migrated database for one test file, cloned from the template built in global setup.
 * `migrated: false` gives an empty database instead (for migrator tests).
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = `of_test_${randomBytes(6).toString("hex")}`;
  const template = options.migrated === false ? "template0" : templateDatabaseName;
  await withAdmin((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  const url = databaseUrl(name);
  const db = createDatabase(url);
  return {
    name,
    url,
    db,
    async drop() {
      await db.$disconnect();
      await withAdmin(async (admin) => {
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [name],
        );
        await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
      });
    },
  };
}
