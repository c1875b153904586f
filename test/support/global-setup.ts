import { Client } from "pg";
import { migrate } from "../../src/db/migrator";
import { adminDatabaseUrl, databaseUrl, templateDatabaseName } from "./env";
import { startScratchPostgres, testPostgres } from "./test-postgres";

/**
 * Once per jest run: with TEST_DATABASE_URL unset, start one embedded PostgreSQL (a real server, in a
 * temporary folder, on a free loopback port) and point TEST_DATABASE_URL at it; the workers inherit
 * it. Then build the migrated template database that every test file clones.
 */
export default async function globalSetup(): Promise<void> {
  // eslint-disable-next-line no-restricted-properties -- tests are configured by the environment too
  if (!process.env.TEST_DATABASE_URL) {
    const started = await startScratchPostgres();
    testPostgres.set(started);
    // eslint-disable-next-line no-restricted-properties -- handed to the workers, which start after this
    process.env.TEST_DATABASE_URL = started.server.url;
  }

  const admin = new Client({ connectionString: adminDatabaseUrl() });
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
