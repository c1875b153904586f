import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "pg";

/**
 * Applies prisma/migrations through plain `pg`, because Prisma's schema engine cannot be
 * downloaded everywhere we run. It keeps Prisma's own bookkeeping table, so `prisma migrate
 * deploy` and this migrator can take turns on the same database.
 */

export const defaultMigrationsDir = path.resolve(__dirname, "../../prisma/migrations");

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MigrationError";
  }
}

const createBookkeepingTable = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

// Any constant works: it only serialises concurrent migrators on one database.
const advisoryLockKey = 72_707_369;

export async function readMigrations(dir = defaultMigrationsDir): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

export async function migrate(databaseUrl: string, dir = defaultMigrationsDir): Promise<MigrationResult> {
  const migrations = await readMigrations(dir);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [advisoryLockKey]);
    try {
      await client.query(createBookkeepingTable);
      return await applyPending(client, migrations);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [advisoryLockKey]);
    }
  } finally {
    await client.end();
  }
}

async function applyPending(client: Client, migrations: Migration[]): Promise<MigrationResult> {
  const { rows } = await client.query<{ migration_name: string; checksum: string; finished_at: Date | null }>(
    `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
  );
  const recorded = new Map(rows.map((row) => [row.migration_name, row]));
  const known = new Set(migrations.map((m) => m.name));
  const unknown = rows.filter((row) => !known.has(row.migration_name)).map((row) => row.migration_name);
  if (unknown.length > 0) {
    throw new MigrationError(
      `The database has migrations that are not in ${defaultMigrationsDir}: ${unknown.join(", ")}`,
    );
  }

  const result: MigrationResult = { applied: [], alreadyApplied: [] };
  for (const migration of migrations) {
    const record = recorded.get(migration.name);
    if (record && record.finished_at === null) {
      throw new MigrationError(
        `Migration ${migration.name} started but never finished; resolve it by hand before migrating again`,
      );
    }
    if (record) {
      if (record.checksum !== migration.checksum) {
        throw new MigrationError(
          `Migration ${migration.name} was modified after it was applied ` +
            `(checksum ${record.checksum} in the database, ${migration.checksum} on disk)`,
        );
      }
      result.alreadyApplied.push(migration.name);
      continue;
    }
    await applyOne(client, migration);
    result.applied.push(migration.name);
  }
  return result;
}

async function applyOne(client: Client, migration: Migration): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
       VALUES ($1, $2, now(), $3, 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK");
    const reason = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`Migration ${migration.name} failed and was rolled back: ${reason}`);
  }
}

/** Names of migrations on disk that the database has not applied (empty when up to date). */
export async function pendingMigrations(databaseUrl: string, dir = defaultMigrationsDir): Promise<string[]> {
  const migrations = await readMigrations(dir);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const exists = await client.query(`SELECT to_regclass('"_prisma_migrations"') AS t`);
    if (exists.rows[0]?.t === null) return migrations.map((m) => m.name);
    const { rows } = await client.query<{ migration_name: string }>(
      `SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Set(rows.map((row) => row.migration_name));
    return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
  } finally {
    await client.end();
  }
}
