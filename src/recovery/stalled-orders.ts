import type { Database } from "../db/client";
import { createTimeline } from "../timeline/timeline";

/** A placed order whose row and timeline have not moved for this long is presumed stuck. */
export const stalledAfterMs = 15 * 60_000;

export interface StalledOrders {
  /**
   * Orders that are placed (`authorized` or `paid`, or `fulfilling` with no claim: a re-drive
   * whose event was lost) but show no progress since `before`: neither their row nor their
   * timeline changed. Oldest first, at most `limit`; their ids.
   */
  find(before: Date, limit: number): Promise<string[]>;
  /** One `recovery-re-emitted` entry per order and run: a retried step writes none twice. */
  recordReEmitted(orderIds: string[], runId: string): Promise<void>;
}

/**
 * Claimed `fulfilling` orders are left out on purpose: their claim belongs to a run that may still
 * be retrying; a run that failed for good has alerted ops, who re-drive it (POST /redrive).
 */
export function createStalledOrders(db: Database): StalledOrders {
  const timeline = createTimeline(db);
  return {
    async find(before, limit) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT o.id
        FROM orders o
        WHERE (o.status IN ('authorized', 'paid') OR (o.status = 'fulfilling' AND o.claim_id IS NULL))
          AND o.updated_at < ${before}
          AND NOT EXISTS (
            SELECT 1 FROM order_timeline t WHERE t.order_id = o.id AND t.created_at >= ${before}
          )
        ORDER BY o.updated_at
        LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },

    async recordReEmitted(orderIds, runId) {
      await timeline.recordMany(orderIds.map((orderId) => ({ orderId, kind: "recovery-re-emitted", runId })));
    },
  };
}
