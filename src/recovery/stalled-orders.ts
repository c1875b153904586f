import type { Database } from "../db/client";
import type { OrderPlacedData } from "../inngest/events";

export interface StalledOrders {
  /**
   * Orders that are placed (`authorized` or `paid`) but show no progress since `before`: neither
   * their row nor their timeline changed. Oldest first, at most `limit`. Each comes as the
   * shop/order.placed payload the intake sends for it.
   */
  find(before: Date, limit: number): Promise<OrderPlacedData[]>;
  /** One `recovery-re-emitted` entry per order and run: a retried step writes none twice. */
  recordReEmitted(orderIds: string[], runId: string): Promise<void>;
}

interface Row {
  id: string;
  customer_id: string;
  email: string;
  total: number;
  currency: string;
  payment_intent_id: string | null;
}

/**
 * `fulfilling` orders are left out on purpose: their claim belongs to a run, so a new run would
 * lose the claim and do nothing; a run that failed for good has already alerted ops.
 */
export function createStalledOrders(db: Database): StalledOrders {
  return {
    async find(before, limit) {
      const rows = await db.$queryRaw<Row[]>`
        SELECT o.id, o.customer_id, o.email, o.total, o.currency, o.payment_intent_id
        FROM orders o
        WHERE o.status IN ('authorized', 'paid')
          AND o.updated_at < ${before}
          AND NOT EXISTS (
            SELECT 1 FROM order_timeline t WHERE t.order_id = o.id AND t.created_at >= ${before}
          )
        ORDER BY o.updated_at
        LIMIT ${limit}`;
      return rows.map((row) => ({
        orderId: row.id,
        customerId: row.customer_id,
        email: row.email,
        total: row.total,
        // Exactly as the intake sends it (src/orders/intake/stripe-intake.ts).
        currency: row.currency.trim().toLowerCase(),
        paymentIntentId: row.payment_intent_id,
      }));
    },

    async recordReEmitted(orderIds, runId) {
      await db.orderTimelineEntry.createMany({
        data: orderIds.map((orderId) => ({ orderId, kind: "recovery-re-emitted", runId, detail: {} })),
        skipDuplicates: true,
      });
    },
  };
}
