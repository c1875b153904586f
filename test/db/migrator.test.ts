import { cp, mkdtemp, mkdir, writeFile, appendFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "pg";
import { defaultMigrationsDir, migrate, pendingMigrations, readMigrations } from "../../src/db/migrator";
import { createTestDatabase, type TestDatabase } from "../support/database";

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function copyOfMigrations(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "migrations-"));
  await cp(defaultMigrationsDir, dir, { recursive: true });
  return dir;
}

describe("migrator", () => {
  let database: TestDatabase;

  beforeEach(async () => {
    database = await createTestDatabase({ migrated: false });
  });
  afterEach(() => database.drop());

  it("applies every migration once and records it like Prisma does", async () => {
    const shipped = await readMigrations();
    expect(await pendingMigrations(database.url)).toEqual(shipped.map((m) => m.name));

    const first = await migrate(database.url);
    const second = await migrate(database.url);

    expect(first.applied).toEqual(shipped.map((m) => m.name));
    expect(second).toEqual({ applied: [], alreadyApplied: shipped.map((m) => m.name) });
    expect(await pendingMigrations(database.url)).toEqual([]);
    const records = await query<{ migration_name: string; checksum: string; applied_steps_count: number }>(
      database.url,
      `SELECT migration_name, checksum, applied_steps_count, finished_at FROM "_prisma_migrations" ORDER BY started_at`,
    );
    expect(records).toEqual(
      shipped.map((m) =>
        expect.objectContaining({ migration_name: m.name, checksum: m.checksum, applied_steps_count: 1 }),
      ),
    );
    expect(records[0]?.checksum).toMatch(/^[0-9a-f]{64}$/);
  });

  it("lets concurrent migrators apply each migration exactly once", async () => {
    const results = await Promise.all([migrate(database.url), migrate(database.url), migrate(database.url)]);
    expect(results.flatMap((r) => r.applied)).toHaveLength((await readMigrations()).length);
  });

  it("refuses to go on when an applied migration was edited", async () => {
    const dir = await copyOfMigrations();
    await migrate(database.url, dir);
    const [first] = await readMigrations(dir);
    if (!first) throw new Error("no migrations shipped");
    await appendFile(path.join(dir, first.name, "migration.sql"), "\n-- edited later\n");

    await expect(migrate(database.url, dir)).rejects.toThrow(/was modified after it was applied/);
  });

  it("rolls back a failing migration whole and records nothing", async () => {
    const dir = await copyOfMigrations();
    await mkdir(path.join(dir, "29991231000000_broken"));
    await writeFile(
      path.join(dir, "29991231000000_broken", "migration.sql"),
      `CREATE TABLE "half_done" (id int);\nSELECT * FROM "no_such_table";\n`,
    );

    await expect(migrate(database.url, dir)).rejects.toThrow(
      /29991231000000_broken failed and was rolled back/,
    );

    const tables = await query<{ t: string | null }>(
      database.url,
      `SELECT to_regclass('half_done')::text AS t`,
    );
    expect(tables[0]?.t).toBeNull();
    expect(await pendingMigrations(database.url, dir)).toEqual(["29991231000000_broken"]);
  });
});
