import { sqlPool, type Database } from "../db/client";

export interface TimelineEntry {
  kind: string;
  detail: Record<string, unknown>;
  runId: string | null;
  at: Date;
}

export interface Timeline {
  /**
   * Appends an entry. With a run id it is written once per (order, kind, run): a retried step
   * that already recorded its outcome records nothing more.
   */
  record(orderId: string, kind: string, detail?: Record<string, unknown>, runId?: string): Promise<void>;
  list(orderId: string): Promise<TimelineEntry[]>;
  /** The run that claimed the order last (a re-drive hands it to a new run), from its `claimed` entry. */
  claimingRunOf(orderId: string): Promise<string | null>;
  /** The order a run worked on, from any entry it wrote. */
  orderOfRun(runId: string): Promise<string | null>;
}

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

    async list(orderId) {
      const rows = await db.orderTimelineEntry.findMany({
        where: { orderId },
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      });
      return rows.map((row) => ({
        kind: row.kind,
        detail: row.detail as Record<string, unknown>,
        runId: row.runId,
        at: row.createdAt,
      }));
    },

    async claimingRunOf(orderId) {
      const entry = await db.orderTimelineEntry.findFirst({
        where: { orderId, kind: "claimed" },
        orderBy: { id: "desc" },
      });
      return entry?.runId ?? null;
    },

    async orderOfRun(runId) {
      const entry = await db.orderTimelineEntry.findFirst({ where: { runId }, select: { orderId: true } });
      return entry?.orderId ?? null;
    },
  };
}
