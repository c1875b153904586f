import { timelineKindSql } from "../../timeline/kinds";
import type { RecordsContext } from "./context";

/** The exchange's new items reserved and released: each once, with their stock movements. */
export function createExchangeRecords(ctx: RecordsContext) {
  const { sql } = ctx;
  return {
    /**
     * Takes the exchange's new items from stock, once per return (`exchange_reserved_at`), each
     * with its `reserved` movement (with the order) in this statement; stock cannot go below zero
     * (the products' CHECK fails the whole statement). Returns the movements made.
     */
    async reserveExchange(returnId: string, runId: string | null) {
      const { rows } = await sql.query<{ sku: string; delta: number }>(
        `WITH target AS (
           UPDATE returns SET exchange_reserved_at = now(), updated_at = now()
           WHERE id = $1::uuid AND exchange_reserved_at IS NULL
             AND EXISTS (SELECT 1 FROM return_lines WHERE return_id = $1::uuid AND exchange_sku IS NOT NULL)
           RETURNING id, order_id
         ),
         wanted AS (
           SELECT l.exchange_sku AS sku, sum(l.quantity)::int AS quantity, t.order_id
           FROM return_lines l JOIN target t ON t.id = l.return_id
           WHERE l.exchange_sku IS NOT NULL GROUP BY l.exchange_sku, t.order_id
         ),
         changed AS (
           UPDATE products p SET stock_on_hand = p.stock_on_hand - w.quantity, updated_at = now()
           FROM wanted w WHERE p.sku = w.sku
           RETURNING p.sku, p.stock_on_hand
         ),
         moved AS (
           INSERT INTO stock_movements (sku, delta, reason, actor, order_id, note, stock_after)
           SELECT c.sku, -w.quantity, 'reserved', 'process-return', w.order_id, 'exchange ' || $1, c.stock_on_hand
           FROM changed c JOIN wanted w USING (sku)
           RETURNING sku, delta
         ),
         noted AS (
           INSERT INTO order_timeline (order_id, kind, detail, run_id)
           SELECT t.order_id, ${timelineKindSql("exchange-reserved")}, jsonb_build_object('returnId', t.id), $2
           FROM target t ON CONFLICT DO NOTHING
         )
         SELECT sku, delta FROM moved ORDER BY sku`,
        [returnId, runId],
      );
      return rows;
    },

    /** The undo: the reserved items back, once, unless they shipped. */
    async releaseExchange(returnId: string, runId: string | null) {
      const { rows } = await sql.query<{ sku: string; delta: number }>(
        `WITH target AS (
           UPDATE returns SET exchange_released_at = now(), updated_at = now()
           WHERE id = $1::uuid AND exchange_reserved_at IS NOT NULL AND exchange_released_at IS NULL
             AND exchange_tracking_number IS NULL
           RETURNING id, order_id
         ),
         wanted AS (
           SELECT l.exchange_sku AS sku, sum(l.quantity)::int AS quantity, t.order_id
           FROM return_lines l JOIN target t ON t.id = l.return_id
           WHERE l.exchange_sku IS NOT NULL GROUP BY l.exchange_sku, t.order_id
         ),
         changed AS (
           UPDATE products p SET stock_on_hand = p.stock_on_hand + w.quantity, updated_at = now()
           FROM wanted w WHERE p.sku = w.sku
           RETURNING p.sku, p.stock_on_hand
         ),
         moved AS (
           INSERT INTO stock_movements (sku, delta, reason, actor, order_id, note, stock_after)
           SELECT c.sku, w.quantity, 'released', 'process-return', w.order_id, 'exchange ' || $1, c.stock_on_hand
           FROM changed c JOIN wanted w USING (sku)
           RETURNING sku, delta
         ),
         noted AS (
           INSERT INTO order_timeline (order_id, kind, detail, run_id)
           SELECT t.order_id, ${timelineKindSql("exchange-released")}, jsonb_build_object('returnId', t.id), $2
           FROM target t ON CONFLICT DO NOTHING
         )
         SELECT sku, delta FROM moved ORDER BY sku`,
        [returnId, runId],
      );
      return rows;
    },
  };
}

/** The exchange's charge: off-session, or paid on its Checkout page, refunded late or by the undo; each once. */
export function createExchangePaymentRecords(ctx: RecordsContext) {
  const { sql } = ctx;
  return {
    /**
     * The exchange charge's outcome, once: a retried step that finds one recorded keeps it (and
     * Stripe, asked again with the same key, would answer the same). Returns whether it wrote.
     */
    async recordExchangeCharge(
      returnId: string,
      charge: {
        amount: number;
        status: "charged" | "failed" | "awaiting_payment";
        paymentIntentId: string | null;
        error?: string | undefined;
      },
    ): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_charge_amount = $2, exchange_charge_status = $3,
                exchange_charge_intent_id = $4, exchange_charge_error = $5,
                exchange_charged_at = CASE WHEN $3 = 'charged' THEN now() END, updated_at = now()
         WHERE id = $1::uuid AND exchange_charge_status IS NULL`,
        [returnId, charge.amount, charge.status, charge.paymentIntentId, charge.error ?? null],
      );
      return (rowCount ?? 0) > 0;
    },

    /** The return's one Checkout Session for the difference, kept once. Returns whether it wrote. */
    async recordExchangeCheckout(returnId: string, checkoutSessionId: string): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_checkout_session_id = $2, updated_at = now()
         WHERE id = $1::uuid AND exchange_checkout_session_id IS NULL`,
        [returnId, checkoutSessionId],
      );
      return (rowCount ?? 0) > 0;
    },

    /**
     * The Checkout Session was paid: it becomes the exchange's charge (its PaymentIntent the
     * session's, which the reconciliation and the undo's refund then find), once, and only while
     * the charge awaits payment on a return not ended. Returns whether it wrote.
     */
    async recordExchangeCheckoutPaid(
      returnId: string,
      paid: { paymentIntentId: string; amount: number },
    ): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_charge_status = 'charged', exchange_charge_intent_id = $2,
                exchange_charge_amount = $3, exchange_charge_error = NULL, exchange_charged_at = now(),
                updated_at = now()
         WHERE id = $1::uuid AND exchange_charge_status = 'awaiting_payment'
           AND status NOT IN ('rejected', 'closed', 'cancelled')`,
        [returnId, paid.paymentIntentId, paid.amount],
      );
      return (rowCount ?? 0) > 0;
    },

    /** The Checkout Session expired unpaid: the charge is unpaid, once. Returns whether it wrote. */
    async markExchangeUnpaid(returnId: string): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_charge_status = 'unpaid', updated_at = now()
         WHERE id = $1::uuid AND exchange_charge_status = 'awaiting_payment'`,
        [returnId],
      );
      return (rowCount ?? 0) > 0;
    },

    /** A Checkout payment that came too late (unpaid, or the return ended), refunded: recorded once. */
    async recordLateExchangePaymentRefund(
      returnId: string,
      refund: { paymentIntentId: string; amount: number; refundId: string },
    ): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_charge_status = 'refunded', exchange_charge_intent_id = $2,
                exchange_charge_amount = $3, exchange_charge_refund_id = $4, updated_at = now()
         WHERE id = $1::uuid AND exchange_charge_status IN ('awaiting_payment', 'unpaid')`,
        [returnId, refund.paymentIntentId, refund.amount, refund.refundId],
      );
      return (rowCount ?? 0) > 0;
    },

    /** The undo's refund of the charge, once (only a charge not refunded already). */
    async recordExchangeChargeRefund(returnId: string, refundId: string): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_charge_status = 'refunded', exchange_charge_refund_id = $2, updated_at = now()
         WHERE id = $1::uuid AND exchange_charge_status = 'charged'`,
        [returnId, refundId],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
