import { sqlPool, type Database } from "../db/client";
import { AppError } from "../errors";
import { timelineKindSql } from "../timeline/kinds";
import type { CarrierBooking } from "../shipping/shipping-provider";
import { exchangeCharge, type ReturnActor, type ReturnCondition } from "./return-policy";

/**
 * The returns' writes, raw pg: each needs what Prisma's model API cannot say in one statement (the
 * order's row lock while the quantities are checked, a conditional UPDATE … RETURNING that moves a
 * return once, the restock that writes its stock movements in the statement that moves the stock,
 * as decision 0070 asks of every writer of stock).
 */

/**
 * charged: the difference was taken; failed: Stripe refused it (the exchange does not ship, the
 * return waits for ops); refunded: charged, then given back (the exchange ended before it shipped).
 */
/**
 * A dearer exchange's charge: charged (off-session, or on the Checkout page), failed (refused),
 * refunded (given back); awaiting_payment while the customer is asked to pay on a Checkout page
 * after the bank wanted them present, unpaid when that page expired unpaid.
 */
export type ExchangeChargeStatus = "charged" | "failed" | "refunded" | "awaiting_payment" | "unpaid";

export type ReturnStatus = "requested" | "approved" | "received" | "closed" | "rejected" | "cancelled";

export interface ReturnRow {
  id: string;
  order_id: string;
  status: ReturnStatus;
  reason: string;
  note: string | null;
  requested_by: string;
  label_carrier: string | null;
  label_tracking_number: string | null;
  label_tracking_url: string | null;
  label_url: string | null;
  label_tracker_status: string | null;
  label_refund_status: string | null;
  label_sent_at: Date | null;
  condition: ReturnCondition | null;
  received_at: Date | null;
  refund_amount: number | null;
  refunded_at: Date | null;
  restocked_at: Date | null;
  written_off_at: Date | null;
  closed_at: Date | null;
  exchange_reserved_at: Date | null;
  exchange_released_at: Date | null;
  exchange_carrier: string | null;
  exchange_tracking_number: string | null;
  exchange_tracking_url: string | null;
  exchange_sent_at: Date | null;
  /** A dearer exchange's one off-session charge (null: none asked yet, or none owed). */
  exchange_charge_amount: number | null;
  exchange_charge_status: ExchangeChargeStatus | null;
  exchange_charge_intent_id: string | null;
  exchange_charge_error: string | null;
  exchange_charged_at: Date | null;
  exchange_charge_refund_id: string | null;
  /** The Checkout Session the difference is paid on after an authentication_required refusal. */
  exchange_checkout_session_id: string | null;
  exchange_tracker_status: string | null;
  exchange_delivered_at: Date | null;
  lines: {
    sku: string;
    quantity: number;
    unitPrice: number;
    exchangeSku: string | null;
    exchangeUnitPrice: number | null;
  }[];
}

const returnColumns = `r.id, r.order_id, r.status, r.reason, r.note, r.requested_by, r.label_carrier,
  r.label_tracking_number, r.label_tracking_url, r.label_url, r.label_tracker_status,
  r.label_refund_status, r.label_sent_at, r.condition, r.received_at, r.refund_amount, r.refunded_at,
  r.restocked_at, r.written_off_at, r.closed_at, r.exchange_reserved_at, r.exchange_released_at,
  r.exchange_carrier, r.exchange_tracking_number, r.exchange_tracking_url, r.exchange_sent_at,
  r.exchange_charge_amount, r.exchange_charge_status, r.exchange_charge_intent_id,
  r.exchange_charge_error, r.exchange_charged_at, r.exchange_charge_refund_id,
  r.exchange_checkout_session_id, r.exchange_tracker_status, r.exchange_delivered_at,
  COALESCE((SELECT json_agg(json_build_object('sku', l.sku, 'quantity', l.quantity, 'unitPrice', l.unit_price,
                                              'exchangeSku', l.exchange_sku, 'exchangeUnitPrice', l.exchange_unit_price)
                            ORDER BY l.sku)
            FROM return_lines l WHERE l.return_id = r.id), '[]'::json) AS lines`;

export interface NewReturn {
  orderId: string;
  lines: readonly { sku: string; quantity: number; exchangeSku?: string | undefined }[];
  reason: string;
  note?: string | undefined;
  requestedBy: ReturnActor;
  approved: boolean;
  /** RETURN_WINDOW: how long after delivery a return may be asked for. */
  windowMs: number;
  now: Date;
}

/** Statuses of a return that still holds its lines (a rejected or cancelled one gives them back). */
const holdingStatuses = `('requested', 'approved', 'received', 'closed')`;

export function createReturnRecords(db: Database) {
  const sql = sqlPool(db);

  const get = async (returnId: string): Promise<ReturnRow | null> => {
    const { rows } = await sql.query<ReturnRow>(
      `SELECT ${returnColumns} FROM returns r WHERE r.id = $1::uuid`,
      [returnId],
    );
    return rows[0] ?? null;
  };

  /**
   * A return carries two labels, the return label (`label_*`) and the exchange's (`exchange_*`), with
   * the same columns under each prefix. The prefix comes from this fixed table, never from input.
   */
  const labelColumns = {
    label: {
      booking: "label_carrier, label_tracking_number, label_tracking_url, label_url, label_provider_id",
      tracking: "label_tracking_number",
      sent: "label_sent_at",
    },
    exchange: {
      booking:
        "exchange_carrier, exchange_tracking_number, exchange_tracking_url, exchange_label_url, exchange_provider_id",
      tracking: "exchange_tracking_number",
      sent: "exchange_sent_at",
    },
  } as const;

  /** Records a bought label once: a retried step that finds one recorded keeps it. */
  const recordBooking = async (
    which: keyof typeof labelColumns,
    returnId: string,
    booking: CarrierBooking,
  ): Promise<void> => {
    const columns = labelColumns[which];
    await sql.query(
      `UPDATE returns SET (${columns.booking}) = ($2, $3, $4, $5, $6), updated_at = now()
       WHERE id = $1::uuid AND ${columns.tracking} IS NULL`,
      [
        returnId,
        booking.carrier,
        booking.trackingNumber,
        booking.trackingUrl,
        booking.labelUrl ?? null,
        booking.providerId ?? null,
      ],
    );
  };

  const markSent = async (which: keyof typeof labelColumns, returnId: string): Promise<void> => {
    const { sent } = labelColumns[which];
    await sql.query(
      `UPDATE returns SET ${sent} = COALESCE(${sent}, now()), updated_at = now() WHERE id = $1::uuid`,
      [returnId],
    );
  };

  return {
    get,

    async listForOrder(orderId: string): Promise<ReturnRow[]> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.order_id = $1::uuid ORDER BY r.created_at DESC, r.id`,
        [orderId],
      );
      return rows;
    },

    /** Returns still to act on (requested, approved, received), oldest first: the console's list. */
    async listOpen(limit: number): Promise<ReturnRow[]> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.status IN ('requested', 'approved', 'received')
         ORDER BY r.created_at, r.id LIMIT $1`,
        [limit],
      );
      return rows;
    },

    async orderExists(orderId: string): Promise<boolean> {
      const { rows } = await sql.query(`SELECT 1 FROM orders WHERE id = $1::uuid`, [orderId]);
      return rows.length > 0;
    },

    async byTrackingNumber(trackingNumber: string): Promise<ReturnRow | null> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.label_tracking_number = $1`,
        [trackingNumber],
      );
      return rows[0] ?? null;
    },

    /** The return whose exchange parcel has this tracking number. */
    async byExchangeTrackingNumber(trackingNumber: string): Promise<ReturnRow | null> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.exchange_tracking_number = $1`,
        [trackingNumber],
      );
      return rows[0] ?? null;
    },

    /**
     * The exchange parcel's tracker status, and its delivery once: a late scan after delivery does
     * not move it back, and a repeated delivery event finds it delivered (false: nothing new).
     */
    async recordExchangeTrackerStatus(returnId: string, status: string): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET exchange_tracker_status = $2,
                exchange_delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE exchange_delivered_at END,
                updated_at = now()
         WHERE id = $1::uuid AND exchange_tracker_status IS DISTINCT FROM 'delivered'
           AND exchange_tracker_status IS DISTINCT FROM $2`,
        [returnId, status],
      );
      return (rowCount ?? 0) > 0;
    },

    /**
     * Checks the request against the order under the order's row lock (two requests at once take
     * turns, so together they cannot return more than was shipped) and records it, with its
     * timeline entry, in one transaction. Refuses with the reason, changing nothing.
     */
    async create(request: NewReturn): Promise<ReturnRow> {
      const client = await sql.connect();
      try {
        await client.query("BEGIN");
        const { rows: orders } = await client.query<{
          status: string;
          delivered_at: Date | null;
          undelivered: number;
        }>(
          `SELECT o.status,
                  (SELECT max(s.delivered_at) FROM shipments s WHERE s.order_id = o.id) AS delivered_at,
                  (SELECT count(*)::int FROM shipments s WHERE s.order_id = o.id AND s.delivered_at IS NULL)
                    AS undelivered
           FROM orders o WHERE o.id = $1::uuid FOR UPDATE OF o`,
          [request.orderId],
        );
        const order = orders[0];
        if (!order) throw new AppError("order_not_found", `Order ${request.orderId} does not exist`);
        if (
          !["delivered", "completed"].includes(order.status) ||
          !order.delivered_at ||
          order.undelivered > 0
        ) {
          throw new AppError(
            "order_not_returnable",
            `Order ${request.orderId} has not been delivered (status ${order.status}): only a delivered parcel can be returned`,
          );
        }
        const closesAt = order.delivered_at.getTime() + request.windowMs;
        if (request.now.getTime() > closesAt) {
          throw new AppError(
            "return_window_closed",
            `The return window of order ${request.orderId} closed on ${new Date(closesAt).toISOString()} (delivered ${order.delivered_at.toISOString()})`,
            {
              details: {
                deliveredAt: order.delivered_at.toISOString(),
                closedAt: new Date(closesAt).toISOString(),
              },
            },
          );
        }
        const { rows: lines } = await client.query<{
          sku: string;
          unit_price: number;
          shipped: number;
          returned: number;
        }>(
          // Units the fulfilment could not reserve (short_quantity) never shipped: not returnable.
          `SELECT l.sku, l.unit_price, l.quantity - l.short_quantity AS shipped,
                  COALESCE((SELECT sum(rl.quantity)::int FROM return_lines rl JOIN returns r ON r.id = rl.return_id
                            WHERE r.order_id = l.order_id AND rl.sku = l.sku AND r.status IN ${holdingStatuses}), 0)
                    AS returned
           FROM order_lines l WHERE l.order_id = $1::uuid`,
          [request.orderId],
        );
        const bySku = new Map(lines.map((line) => [line.sku, line]));
        const unknown = request.lines.filter((line) => !bySku.has(line.sku)).map((line) => line.sku);
        if (unknown.length > 0) {
          throw new AppError(
            "return_line_invalid",
            `Order ${request.orderId} has no line ${unknown.join(", ")}`,
            {
              details: { skus: unknown },
            },
          );
        }
        const over = request.lines.flatMap((line) => {
          const ordered = bySku.get(line.sku);
          const left = ordered ? ordered.shipped - ordered.returned : 0;
          return line.quantity > left ? [{ sku: line.sku, requested: line.quantity, returnable: left }] : [];
        });
        if (over.length > 0) {
          throw new AppError(
            "return_quantity_exceeded",
            over
              .map(
                (o) =>
                  `${o.sku}: ${o.requested} asked, ${o.returnable} left to return (shipped minus returned)`,
              )
              .join("; "),
            { details: { lines: over } },
          );
        }
        // An exchange asks for a product on sale, in the order's currency; one that costs more
        // is charged the difference off-session, on the card checkout saved (see docs/returns.md).
        const wanted = [
          ...new Set(request.lines.flatMap((line) => (line.exchangeSku ? [line.exchangeSku] : []))),
        ];
        const { rows: products } = wanted.length
          ? await client.query<{
              sku: string;
              unit_price: number;
              currency: string;
              archived_at: Date | null;
              digital: boolean;
              stock_on_hand: number;
            }>(
              `SELECT sku, unit_price, currency, archived_at, digital, stock_on_hand FROM products WHERE sku = ANY($1::text[])`,
              [wanted],
            )
          : { rows: [] };
        const { rows: payers } = await client.query<{
          currency: string;
          stripe_customer_id: string | null;
          payment_method_id: string | null;
        }>(`SELECT currency, stripe_customer_id, payment_method_id FROM orders WHERE id = $1::uuid`, [
          request.orderId,
        ]);
        const payer = payers[0];
        const currency = payer?.currency.trim().toLowerCase();
        const productOf = new Map(products.map((product) => [product.sku, product]));
        const exchangePrices = new Map<string, number>();
        for (const line of request.lines) {
          if (!line.exchangeSku) continue;
          const product = productOf.get(line.exchangeSku);
          if (
            !product ||
            product.archived_at ||
            product.digital ||
            product.currency.trim().toLowerCase() !== currency
          ) {
            throw new AppError(
              "exchange_sku_invalid",
              `${line.exchangeSku} cannot be sent in exchange for ${line.sku}: not a physical product on sale in the order's currency`,
              { details: { sku: line.sku, exchangeSku: line.exchangeSku } },
            );
          }
          const asked = request.lines
            .filter((other) => other.exchangeSku === line.exchangeSku)
            .reduce((sum, other) => sum + other.quantity, 0);
          if (product.stock_on_hand < asked) {
            throw new AppError(
              "insufficient_stock",
              `Only ${product.stock_on_hand} of ${line.exchangeSku} in stock`,
              {
                details: { sku: line.exchangeSku, stockOnHand: product.stock_on_hand },
              },
            );
          }
          exchangePrices.set(line.sku, product.unit_price);
        }
        const owed = exchangeCharge(
          request.lines.map((line) => ({
            unitPrice: bySku.get(line.sku)?.unit_price ?? 0,
            quantity: line.quantity,
            exchangeSku: line.exchangeSku ?? null,
            exchangeUnitPrice: exchangePrices.get(line.sku) ?? null,
          })),
        );
        if (owed > 0 && !(payer?.stripe_customer_id && payer.payment_method_id)) {
          // Paid before checkout saved cards (or with a method that cannot be saved): nothing
          // to charge the difference to without the customer at a payment page.
          throw new AppError(
            "exchange_needs_saved_card",
            `The exchange costs ${owed} more than the returned lines, and order ${request.orderId} has no saved card to charge it to: return the lines for a refund and order the new items`,
            { details: { difference: owed } },
          );
        }
        const { rows: created } = await client.query<{ id: string }>(
          `INSERT INTO returns (id, order_id, status, reason, note, requested_by, updated_at)
           VALUES (gen_random_uuid(), $1::uuid, $2::return_status, $3, $4, $5, now()) RETURNING id`,
          [
            request.orderId,
            request.approved ? "approved" : "requested",
            request.reason,
            request.note ?? null,
            request.requestedBy,
          ],
        );
        const returnId = created[0]?.id as string;
        await client.query(
          `INSERT INTO return_lines (return_id, sku, quantity, unit_price, exchange_sku, exchange_unit_price)
           SELECT $1::uuid, l.sku, l.quantity, o.unit_price, l.exchange_sku, l.exchange_unit_price
           FROM unnest($2::text[], $3::int[], $5::text[], $6::int[]) AS l(sku, quantity, exchange_sku, exchange_unit_price)
           JOIN order_lines o ON o.order_id = $4::uuid AND o.sku = l.sku`,
          [
            returnId,
            request.lines.map((l) => l.sku),
            request.lines.map((l) => l.quantity),
            request.orderId,
            request.lines.map((l) => l.exchangeSku ?? null),
            request.lines.map((l) => exchangePrices.get(l.sku) ?? null),
          ],
        );
        await client.query(
          `INSERT INTO order_timeline (order_id, kind, detail) VALUES ($1::uuid, ${timelineKindSql("return-requested")}, $2::jsonb)`,
          [
            request.orderId,
            JSON.stringify({
              returnId,
              by: request.requestedBy,
              reason: request.reason,
              lines: request.lines,
              approved: request.approved,
            }),
          ],
        );
        await client.query("COMMIT");
        return (await get(returnId)) as ReturnRow;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },

    /**
     * Moves a return from one of `from` to `to` in one conditional UPDATE; null when it was not in
     * one of them (someone else moved it first, or it never was).
     */
    async transition(
      returnId: string,
      from: readonly ReturnStatus[],
      to: ReturnStatus,
      fields: { condition?: ReturnCondition; by?: ReturnActor; note?: string | undefined } = {},
    ): Promise<ReturnRow | null> {
      const { rows } = await sql.query<{ id: string }>(
        `UPDATE returns SET status = $3::return_status, updated_at = now(),
                condition = COALESCE($4, condition),
                received_by = CASE WHEN $3 = 'received' THEN $5 ELSE received_by END,
                received_at = CASE WHEN $3 = 'received' THEN now() ELSE received_at END,
                decided_by = CASE WHEN $3 <> 'received' THEN COALESCE($5, decided_by) ELSE decided_by END,
                decision_note = COALESCE($6, decision_note),
                closed_at = CASE WHEN $3 IN ('closed', 'rejected', 'cancelled') THEN now() ELSE closed_at END
         WHERE id = $1::uuid AND status = ANY($2::return_status[]) RETURNING id`,
        [returnId, from, to, fields.condition ?? null, fields.by ?? null, fields.note ?? null],
      );
      return rows[0] ? get(returnId) : null;
    },

    /** The bought return label, once: a retried step that finds one recorded keeps it. */
    recordLabel: (returnId: string, booking: CarrierBooking) => recordBooking("label", returnId, booking),
    markLabelSent: (returnId: string) => markSent("label", returnId),

    async recordLabelRefund(returnId: string, status: string): Promise<void> {
      await sql.query(`UPDATE returns SET label_refund_status = $2, updated_at = now() WHERE id = $1::uuid`, [
        returnId,
        status,
      ]);
    },

    /** The return tracker's latest status; a late scan after receipt does not move it back. */
    async recordTrackerStatus(returnId: string, status: string): Promise<void> {
      await sql.query(
        `UPDATE returns SET label_tracker_status = $2, updated_at = now()
         WHERE id = $1::uuid AND (label_tracker_status IS DISTINCT FROM 'delivered')`,
        [returnId, status],
      );
    },

    async recordRefund(returnId: string, amount: number, fee: number): Promise<void> {
      await sql.query(
        `UPDATE returns SET refund_amount = $2, restocking_fee = $3, refunded_at = COALESCE(refunded_at, now()),
                updated_at = now() WHERE id = $1::uuid`,
        [returnId, amount, fee],
      );
    },

    /**
     * Puts the returned units back on the shelf, once per return: the return is marked restocked,
     * each product's stock rises by its line and a `returned` movement (with the order) is written,
     * all in this one statement, so a repeat (a retried step, the carrier's event twice) finds it
     * restocked and moves nothing. Returns the movements made (none on a repeat).
     */
    async restock(returnId: string, runId: string | null) {
      const { rows } = await sql.query<{ sku: string; delta: number; stock_after: number }>(
        `WITH target AS (
           UPDATE returns SET restocked_at = now(), updated_at = now()
           WHERE id = $1::uuid AND status = 'received' AND restocked_at IS NULL AND written_off_at IS NULL
           RETURNING id, order_id
         ),
         lines AS (
           SELECT l.sku, l.quantity, t.order_id FROM return_lines l JOIN target t ON t.id = l.return_id
         ),
         changed AS (
           UPDATE products p SET stock_on_hand = p.stock_on_hand + l.quantity, updated_at = now()
           FROM lines l WHERE p.sku = l.sku
           RETURNING p.sku, p.stock_on_hand
         ),
         moved AS (
           INSERT INTO stock_movements (sku, delta, reason, actor, order_id, note, stock_after)
           SELECT c.sku, l.quantity, 'returned', 'process-return', l.order_id, 'return ' || $1, c.stock_on_hand
           FROM changed c JOIN lines l USING (sku)
           RETURNING sku, delta, stock_after
         ),
         noted AS (
           INSERT INTO order_timeline (order_id, kind, detail, run_id)
           SELECT t.order_id, ${timelineKindSql("return-restocked")},
                  jsonb_build_object('returnId', t.id, 'lines', (SELECT json_agg(json_build_object('sku', sku, 'quantity', quantity)) FROM lines)),
                  $2
           FROM target t
           ON CONFLICT DO NOTHING
         )
         SELECT sku, delta, stock_after FROM moved ORDER BY sku`,
        [returnId, runId],
      );
      return rows.map((row) => ({ sku: row.sku, delta: row.delta, stockAfter: row.stock_after }));
    },

    /** Damaged goods: no stock moves (they never were on hand since they shipped); marked once. */
    async writeOff(returnId: string): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET written_off_at = now(), updated_at = now()
         WHERE id = $1::uuid AND status = 'received' AND restocked_at IS NULL AND written_off_at IS NULL`,
        [returnId],
      );
      return (rowCount ?? 0) > 0;
    },

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

    /** The card checkout saved on the return's order, for the exchange's charge. */
    async savedCard(returnId: string) {
      const { rows } = await sql.query<{
        email: string;
        currency: string;
        stripe_customer_id: string | null;
        payment_method_id: string | null;
      }>(
        `SELECT o.email, o.currency, o.stripe_customer_id, o.payment_method_id
         FROM returns r JOIN orders o ON o.id = r.order_id WHERE r.id = $1::uuid`,
        [returnId],
      );
      return rows[0] ?? null;
    },

    /** The exchange's label, once, as the return label is. */
    recordExchangeShipment: (returnId: string, booking: CarrierBooking) =>
      recordBooking("exchange", returnId, booking),
    markExchangeSent: (returnId: string) => markSent("exchange", returnId),

    /** What the returned lines weigh, one unit each, for the return parcel (null: the default). */
    async destination(returnId: string) {
      const { rows } = await sql.query<{
        shipping_address: unknown;
        weights: Record<string, number | null> | null;
      }>(
        `SELECT o.shipping_address,
                (SELECT json_object_agg(p.sku, p.weight_oz) FROM products p
                 WHERE p.sku IN (SELECT l.sku FROM return_lines l WHERE l.return_id = r.id
                                 UNION SELECT l.exchange_sku FROM return_lines l WHERE l.return_id = r.id)) AS weights
         FROM returns r JOIN orders o ON o.id = r.order_id WHERE r.id = $1::uuid`,
        [returnId],
      );
      return rows[0] ?? null;
    },
  };
}

export type ReturnRecords = ReturnType<typeof createReturnRecords>;
