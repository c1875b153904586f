import { Client } from "pg";
import { migrate } from "../../src/db/migrator";
import { adminDatabaseUrl, databaseUrl, templateDatabaseName } from "./env";

/** Builds the migrated template database once per jest run; each test file clones it. */
export default async function globalSetup(): Promise<void> {
  const admin = new Client({ connectionString: adminDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [templateDatabaseName],
    );
    await admin.query(`DROP DATABASE IF EXISTS "${templateDatabaseName}"`);
    await admin.query(`CREATE DATABASE "${templateDatabaseName}"`);
  } finally {
    await admin.end();
  }
  await migrate(databaseUrl(templateDatabaseName));
}
