import type { Database } from "../db/client";
import { readMigrations } from "../db/migrator";

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}

export type ReadinessProbe = () => Promise<ReadinessReport>;

/** Ready when the database answers and has applied every migration this build ships. */
export async function createDatabaseReadiness(db: Database, migrationsDir?: string): Promise<ReadinessProbe> {
  const expected = (await readMigrations(migrationsDir)).map((m) => m.name);
  return async (): Promise<ReadinessReport> => {
    try {
      const rows = await db.$queryRaw<{ migration_name: string }[]>`
        SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`;
      const applied = new Set(rows.map((row) => row.migration_name));
      const missing = expected.filter((name) => !applied.has(name));
      if (missing.length > 0) {
        return {
          ready: false,
          checks: {
            database: { ok: true },
            migrations: { ok: false, detail: `pending: ${missing.join(", ")}` },
          },
        };
      }
      return { ready: true, checks: { database: { ok: true }, migrations: { ok: true } } };
    } catch {
      return { ready: false, checks: { database: { ok: false, detail: "unreachable or not migrated" } } };
    }
  };
}
