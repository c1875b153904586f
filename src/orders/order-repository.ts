import { sqlPool, type Database } from "../db/client";
import { sqlList, unscannedTrackerStatuses } from "../shared/order-model";
import type { OrderStatus } from "../generated/prisma/enums";
import { orderLinesJsonSql } from "../db/order-lines-sql";
import { timelineKindSql, type TimelineDetail, type TimelineKind } from "../timeline/kinds";

export type { OrderStatus };

export interface OrderLineView {
  sku: string;
  name: string;
  unitPrice: number;
  quantity: number;
}

export interface FulfilmentOrder {
  id: string;
  customerId: string;
  email: string;
  status: OrderStatus;
  currency: string;
  total: number;
  paymentIntentId: string | null;
  claimId: string | null;
  cancelRequestedAt: Date | null;
  createdAt: Date;
  /** When shop/order.placed was accepted: roughly when the fulfilment run started. */
  placedAt: Date | null;
  lines: OrderLineView[];
  hasShipment: boolean;
}

interface FulfilmentRow {
  id: string;
  customer_id: string;
  email: string;
  status: OrderStatus;
  currency: string;
  total: number;
  payment_intent_id: string | null;
  claim_id: string | null;
  cancel_requested_at: Date | null;
  created_at: Date;
  placed_event_sent_at: Date | null;
  lines: OrderLineView[];
  has_shipment: boolean;
}

/** What a run needs of the order it just claimed: returned by the claim's own statement. */
export interface ClaimedOrder {
  paymentIntentId: string | null;
  lines: OrderLineView[];
}

export type ClaimOutcome =
  /**
   * `booked`: a re-drive of an order whose parcel is booked: the run resumes after the booking.
   * `order`: only when the claim was asked for it (`runId`) and taken by this very statement; a
   * retried claim that finds its own claim in place reads the order itself.
   */
  | { claimed: true; booked?: boolean; order?: ClaimedOrder }
  | {
      claimed: false;
      reason: "claimed-by-another-run" | "cancel-requested" | "not-paid-yet" | "not-payable" | "not-found";
    };

/** Statuses from which fulfilment may start: the money is authorized or already taken. */
export const payableStatuses: readonly OrderStatus[] = ["authorized", "paid"];
/** A `fulfilling` order without a claim was re-driven: its failed run let go, a new run may take it. */
const claimableStatuses: readonly OrderStatus[] = [...payableStatuses, "fulfilling"];
/** Statuses that may still become payable: the payment is not confirmed yet. */
const awaitingPaymentStatuses: readonly OrderStatus[] = ["pending", "payment_processing"];

export interface OrderRepository {
  findForFulfilment(orderId: string): Promise<FulfilmentOrder | null>;
  /**
   * Gives the order to one fulfilment run: it takes `claimId` only when it has none (and is
   * payable and not being cancelled) or already has this one. One conditional UPDATE decides,
   * so two runs racing for the same order cannot both win, whenever they run. With `runId`, the
   * same statement writes the run's `claimed` timeline entry and returns the order's lines and
   * PaymentIntent (`order`), so a first claim is one round trip.
   */
  claim(orderId: string, claimId: string, options?: { runId?: string }): Promise<ClaimOutcome>;
  /**
   * Moves the order to `to` only from one of `from`; returns whether it moved. `entry`: a timeline
   * entry written in the same statement whether or not the order moved (as a separate
   * `timeline.record` after it would be), once per (order, kind, run).
   */
  transition(
    orderId: string,
    from: readonly OrderStatus[],
    to: OrderStatus,
    entry?: TransitionEntry,
  ): Promise<boolean>;
  flagForOps(orderId: string, reason: string): Promise<void>;
  /** Marks a cancellation request; false when the order is past the point of cancelling. */
  requestCancellation(orderId: string, cancellableFrom: readonly OrderStatus[]): Promise<boolean>;
}

/** A timeline entry that rides in a transition's statement. */
export interface TransitionEntry {
  kind: TimelineKind;
  detail: TimelineDetail;
  runId: string;
}

export interface ClaimTakenRow {
  payment_intent_id: string | null;
  lines: OrderLineView[];
}

/**
 * The claim, one statement: the conditional UPDATE that gives the order to the run, the run's
 * `claimed` entry when a run id is given, and the order's lines and PaymentIntent, which the run
 * keeps (a row only when this statement took the order).
 */
export const claimStatement = `
  WITH taken AS (
    UPDATE orders SET claim_id = $2, status = 'fulfilling', updated_at = now()
    WHERE id = $1::uuid AND claim_id IS NULL AND cancel_requested_at IS NULL
      AND status = ANY($3::order_status[])
    RETURNING id, payment_intent_id
  ),
  entry AS (
    INSERT INTO order_timeline (order_id, kind, detail, run_id)
    SELECT id, ${timelineKindSql("claimed")}, jsonb_build_object('claimId', $2::text), $4 FROM taken
    WHERE $4::text IS NOT NULL
    ON CONFLICT DO NOTHING
  )
  SELECT t.payment_intent_id, ${orderLinesJsonSql("t")} AS lines FROM taken t`;

/**
 * A transition and its timeline entry in one statement: the entry does not depend on the move
 * (a retried step whose move landed still finds its entry, once per order, kind and run). A row
 * comes back only when the order moved.
 */
export const transitionWithEntryStatement = `
  WITH moved AS (
    UPDATE orders SET status = $3::order_status, updated_at = now()
    WHERE id = $1::uuid AND status = ANY($2::order_status[])
    RETURNING 1
  ),
  entry AS (
    INSERT INTO order_timeline (order_id, kind, detail, run_id)
    VALUES ($1::uuid, $4, $5::jsonb, $6)
    ON CONFLICT DO NOTHING
  )
  SELECT 1 AS moved FROM moved`;

/**
 * `onTransition` hears of every status change this repository makes (for metrics), once: only the
 * UPDATE that actually moved the order reports it, never a retried claim finding its own claim.
 */
export function createOrderRepository(
  db: Database,
  options: { onTransition?: (to: OrderStatus) => void } = {},
): OrderRepository {
  const moved = (to: OrderStatus) => options.onTransition?.(to);
  // The workflow's statements go to pg directly, all of them (one idiom in a file): one round trip
  // each, without Prisma's per-query cost (docs/benchmarks.md). `updated_at` is set by hand where
  // Prisma's @updatedAt would have set it.
  const sql = sqlPool(db);
  return {
    async findForFulfilment(orderId) {
      // The order, its lines and whether it has a shipment in one statement (Prisma's include
      // costs one per relation).
      const { rows } = await sql.query<FulfilmentRow>(
        `SELECT o.id, o.customer_id, o.email, o.status::text AS status, o.currency, o.total,
                o.payment_intent_id, o.claim_id, o.cancel_requested_at, o.created_at,
                o.placed_event_sent_at,
                ${orderLinesJsonSql("o")} AS lines,
                EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id) AS has_shipment
         FROM orders o WHERE o.id = $1::uuid`,
        [orderId],
      );
      const order = rows[0];
      if (!order) return null;
      return {
        id: order.id,
        customerId: order.customer_id,
        email: order.email,
        status: order.status,
        currency: order.currency,
        total: order.total,
        paymentIntentId: order.payment_intent_id,
        claimId: order.claim_id,
        cancelRequestedAt: order.cancel_requested_at,
        createdAt: order.created_at,
        placedAt: order.placed_event_sent_at,
        lines: order.lines,
        hasShipment: order.has_shipment,
      };
    },

    async claim(orderId, claimId, options = {}) {
      const { rows: taken } = await sql.query<ClaimTakenRow>(claimStatement, [
        orderId,
        claimId,
        claimableStatuses,
        options.runId ?? null,
      ]);
      const first = taken[0];
      if (first) {
        moved("fulfilling");
        if (options.runId === undefined) return { claimed: true };
        return { claimed: true, order: { paymentIntentId: first.payment_intent_id, lines: first.lines } };
      }
      // Not taken: what stands in the way is read in a statement of its own, whose snapshot is
      // newer than the claim's (a race lost to another run's commit shows that run's claim).
      const { rows } = await sql.query<{
        claim_id: string | null;
        cancel_requested_at: Date | null;
        status: OrderStatus;
      }>(`SELECT claim_id, cancel_requested_at, status::text AS status FROM orders WHERE id = $1::uuid`, [
        orderId,
      ]);
      const order = rows[0];
      if (!order) return { claimed: false, reason: "not-found" };
      const booked = order.status === "shipped" || order.status === "delivered";
      // A retried claim step finds its own claim already in place.
      if (order.claim_id === claimId) return booked ? { claimed: true, booked } : { claimed: true };
      if (booked && order.claim_id === null && order.cancel_requested_at === null) {
        // Re-driven after its parcel was booked (redrive-order.ts let go of the old claim): the
        // new run takes the order without moving it, and resumes after the booking.
        const resumed = await sql.query(
          `UPDATE orders o SET claim_id = $2, updated_at = now()
           WHERE o.id = $1::uuid AND o.claim_id IS NULL AND o.cancel_requested_at IS NULL
             AND o.status IN ('shipped', 'delivered')
             AND EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id)`,
          [orderId, claimId],
        );
        if ((resumed.rowCount ?? 0) > 0) return { claimed: true, booked: true };
      }
      if (order.claim_id !== null) return { claimed: false, reason: "claimed-by-another-run" };
      if (order.cancel_requested_at !== null) return { claimed: false, reason: "cancel-requested" };
      if (awaitingPaymentStatuses.includes(order.status)) return { claimed: false, reason: "not-paid-yet" };
      return { claimed: false, reason: "not-payable" };
    },

    async transition(orderId, from, to, entry) {
      const updated = entry
        ? await sql.query(transitionWithEntryStatement, [
            orderId,
            from,
            to,
            entry.kind,
            JSON.stringify(entry.detail),
            entry.runId,
          ])
        : await sql.query(
            `UPDATE orders SET status = $3::order_status, updated_at = now()
             WHERE id = $1::uuid AND status = ANY($2::order_status[])`,
            [orderId, from, to],
          );
      const movedNow = entry ? updated.rows.length > 0 : (updated.rowCount ?? 0) > 0;
      if (movedNow) moved(to);
      return movedNow;
    },

    async flagForOps(orderId, reason) {
      await sql.query(`UPDATE orders SET attention_reason = $2, updated_at = now() WHERE id = $1::uuid`, [
        orderId,
        reason,
      ]);
    },

    async requestCancellation(orderId, cancellableFrom) {
      const marked = await sql.query(
        `UPDATE orders o SET cancel_requested_at = now(), updated_at = now()
         WHERE o.id = $1::uuid AND o.status = ANY($2::order_status[])
           AND NOT EXISTS (
             SELECT 1 FROM shipments s WHERE s.order_id = o.id AND s.superseded_at IS NULL
               -- A shipped order's label can still be handed back until the carrier's first scan
               -- (the order model's labelVoidable, over the current parcels as labels.voidable).
               AND NOT (o.status = 'shipped' AND s.status = 'booked' AND s.label_refund_status IS NULL
                        AND COALESCE(s.tracker_status, 'unknown') IN (${sqlList(unscannedTrackerStatuses)})))`,
        [orderId, [...cancellableFrom]],
      );
      return (marked.rowCount ?? 0) > 0;
    },
  };
}
