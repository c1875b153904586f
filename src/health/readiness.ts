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

/**
 * With INNGEST_DEV the Inngest dev server runs every step: when nothing answers at its address,
 * no order moves, and /readyz says so (`inngest` check) instead of 200. Any HTTP answer counts as
 * reachable (its UI answers `/`); a refused or timed-out connection does not.
 *
 * Only for the dev server: Inngest Cloud or a self-hosted Inngest being down must not take every
 * replica out of the load balancer (customer pages, checkout holds and the console still work,
 * and webhooks answer 503 `inngest_unavailable` so that Stripe retries).
 */
export function createInngestDevServerReadiness(url: string, timeoutMs = 2_000): ReadinessProbe {
  return async (): Promise<ReadinessReport> => {
    try {
      await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" }).then((res) =>
        res.body?.cancel(),
      );
      return { ready: true, checks: { inngest: { ok: true } } };
    } catch {
      return {
        ready: false,
        checks: {
          inngest: {
            ok: false,
            detail: `the Inngest dev server at ${url} is unreachable (INNGEST_DEV); start it with: npx inngest-cli@latest dev`,
          },
        },
      };
    }
  };
}

/** Every probe's checks in one report: ready when all are. */
export function combineReadiness(probes: readonly ReadinessProbe[]): ReadinessProbe {
  return async (): Promise<ReadinessReport> => {
    const reports = await Promise.all(probes.map((probe) => probe()));
    return {
      ready: reports.every((report) => report.ready),
      checks: Object.assign({}, ...reports.map((report) => report.checks)) as ReadinessReport["checks"],
    };
  };
}
