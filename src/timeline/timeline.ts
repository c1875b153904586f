import { sqlPool, type Database } from "../db/client";
import type { TimelineDetail, TimelineKind } from "./kinds";

export interface TimelineEntry {
  kind: string;
  detail: TimelineDetail;
  runId: string | null;
  at: Date;
}

export interface NewTimelineEntry {
  orderId: string;
  kind: TimelineKind;
  detail?: TimelineDetail;
  runId?: string;
}

/**
 * The order timeline's one writer (and its reads). Entries are written here, or inside the
 * statement that moves an order (or records a step's outcome: a stock hold's conversion, an
 * e-mail's `sent`/`failed`) with the kind from src/timeline/kinds.ts, or within a caller's
 * Prisma transaction through src/timeline/in-transaction.ts; nowhere else.
 */
export interface Timeline {
  /**
   * Appends an entry. With a run id it is written once per (order, kind, run): a retried step
   * that already recorded its outcome records nothing more.
   */
  record(orderId: string, kind: TimelineKind, detail?: TimelineDetail, runId?: string): Promise<void>;
  /** Appends several entries in one statement, each once per (order, kind, run) as `record`. */
  recordMany(entries: readonly NewTimelineEntry[]): Promise<void>;
  list(orderId: string): Promise<TimelineEntry[]>;
  /** The run that claimed the order last (a re-drive hands it to a new run), from its `claimed` entry. */
  claimingRunOf(orderId: string): Promise<string | null>;
  /** The order a run worked on, from any entry it wrote. */
  orderOfRun(runId: string): Promise<string | null>;
}

export interface EntryRow {
  kind: string;
  detail: TimelineDetail;
  run_id: string | null;
  created_at: Date;
}

/** An order's timeline, oldest first. */
export const timelineListStatement = `SELECT kind, detail, run_id, created_at FROM order_timeline
         WHERE order_id = $1::uuid ORDER BY created_at, id`;

export function createTimeline(db: Database): Timeline {
  // Every workflow step records an entry: straight to pg, one round trip (docs/benchmarks.md).
  const sql = sqlPool(db);
  return {
    async record(orderId, kind, detail = {}, runId) {
      await sql.query(
        `INSERT INTO order_timeline (order_id, kind, detail, run_id)
         VALUES ($1::uuid, $2, $3::jsonb, $4) ON CONFLICT DO NOTHING`,
        [orderId, kind, JSON.stringify(detail), runId ?? null],
      );
    },

    async recordMany(entries) {
      if (entries.length === 0) return;
      await sql.query(
        `INSERT INTO order_timeline (order_id, kind, detail, run_id)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::text[])
         ON CONFLICT DO NOTHING`,
        [
          entries.map((entry) => entry.orderId),
          entries.map((entry) => entry.kind),
          entries.map((entry) => JSON.stringify(entry.detail ?? {})),
          entries.map((entry) => entry.runId ?? null),
        ],
      );
    },

    async list(orderId) {
      const { rows } = await sql.query<EntryRow>(timelineListStatement, [orderId]);
      return rows.map((row) => ({
        kind: row.kind,
        detail: row.detail,
        runId: row.run_id,
        at: row.created_at,
      }));
    },

    async claimingRunOf(orderId) {
      const { rows } = await sql.query<{ run_id: string | null }>(
        `SELECT run_id FROM order_timeline WHERE order_id = $1::uuid AND kind = 'claimed'
         ORDER BY id DESC LIMIT 1`,
        [orderId],
      );
      return rows[0]?.run_id ?? null;
    },

    async orderOfRun(runId) {
      const { rows } = await sql.query<{ order_id: string }>(
        `SELECT order_id FROM order_timeline WHERE run_id = $1 LIMIT 1`,
        [runId],
      );
      return rows[0]?.order_id ?? null;
    },
  };
}
