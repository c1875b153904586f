import type { Database } from "../db/client";
import type { TimelineKind } from "../timeline/kinds";
import { createTimeline } from "../timeline/timeline";

/** Stripe holds a card authorization for about seven days; after that it is cancelled. */
export const authorizationLifetimeMs = 7 * 24 * 3600 * 1000;

export interface ExpiringAuthorization {
  orderId: string;
  customerId: string;
  total: number;
  currency: string;
  paymentIntentId: string;
  status: string;
  /** ISO time: when the authorization was taken, plus its lifetime. */
  expiresAt: string;
}

export interface ExpiringAuthorizations {
  /**
   * Orders whose money is authorized but not captured, voided or refunded, whose authorization
   * expires at or before `expiringBy`, and that were not alerted about yet. Soonest first.
   */
  find(expiringBy: Date, limit: number): Promise<ExpiringAuthorization[]>;
  /** Marks the order alerted (`authorization-expiry-alerted`), so later runs skip it. */
  recordAlerted(orderId: string, expiresAt: string, runId: string): Promise<void>;
}

export const expiryAlertedKind = "authorization-expiry-alerted" satisfies TimelineKind;

interface Row {
  id: string;
  customer_id: string;
  total: number;
  currency: string;
  payment_intent_id: string;
  status: string;
  expires_at: Date;
}

export function createExpiringAuthorizations(db: Database): ExpiringAuthorizations {
  const lifetime = `${authorizationLifetimeMs} milliseconds`;
  const timeline = createTimeline(db);
  return {
    async find(expiringBy, limit) {
      // Authorized when the intake recorded it; the order's creation (earlier) when that entry is missing.
      const rows = await db.$queryRaw<Row[]>`
        SELECT * FROM (
          SELECT o.id, o.customer_id, o.total, o.currency, o.payment_intent_id, o.status::text AS status,
                 COALESCE(
                   (SELECT min(t.created_at) FROM order_timeline t
                    WHERE t.order_id = o.id AND t.kind = 'payment-authorized'),
                   o.created_at
                 ) + ${lifetime}::interval AS expires_at
          FROM orders o
          WHERE o.status IN ('authorized', 'fulfilling')
            AND o.payment_intent_id IS NOT NULL
            AND o.attention_reason IS NULL
            AND NOT EXISTS (
              SELECT 1 FROM payments p
              WHERE p.order_id = o.id AND p.status IN ('captured', 'refunded', 'voided')
            )
            AND NOT EXISTS (
              SELECT 1 FROM order_timeline t WHERE t.order_id = o.id AND t.kind = ${expiryAlertedKind}
            )
        ) candidates
        WHERE expires_at <= ${expiringBy}
        ORDER BY expires_at
        LIMIT ${limit}`;
      return rows.map((row) => ({
        orderId: row.id,
        customerId: row.customer_id,
        total: row.total,
        currency: row.currency.trim().toLowerCase(),
        paymentIntentId: row.payment_intent_id,
        status: row.status,
        expiresAt: row.expires_at.toISOString(),
      }));
    },

    async recordAlerted(orderId, expiresAt, runId) {
      await timeline.record(orderId, expiryAlertedKind, { expiresAt }, runId);
    },
  };
}
