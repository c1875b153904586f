import { randomUUID } from "node:crypto";
import { sqlPool, type Database } from "../db/client";
import type { OrderStatus } from "./order-repository";
import { labelWanted } from "../shared/order-model";
import type { ParcelBooking } from "../shipping/shipment-repository";

export type { ParcelBooking } from "../shipping/shipment-repository";
import { timelineKindSql, type TimelineKind } from "../timeline/kinds";

/**
 * Why a guarded write did not land: the order's cancellation was requested (or it left
 * `fulfilling` some other way), or a re-drive gave the order to another run.
 */
export type GuardRefusal = "cancelled" | "superseded";
export type Guarded<T> = { landed: true; value: T } | { landed: false; reason: GuardRefusal };

export interface CaptureRecord {
  orderId: string;
  claimId: string;
  runId: string;
  paymentIntentId: string;
  amountCaptured: number;
  currency: string;
  alreadyCaptured: boolean;
  /** What the card was authorized for, when more than was captured (a partial capture). */
  amountAuthorized?: number;
  /** Captured money already given back (the short lines of a partial fulfilment, refunded). */
  amountRefunded?: number;
}

export interface ShipmentRecordInput {
  orderId: string;
  claimId: string;
  runId: string;
  /** Every parcel of the order (one or more); null for a digital-only order: nothing shipped. */
  parcels: readonly ParcelBooking[] | null;
}

/** What the cleanup found when it fenced the order against late writes of the cancelled run. */
export type FenceOutcome = "fenced" | "shipped" | "not-found";

/**
 * The writes by which fulfilment moves an order forward. Each is one statement that first
 * locks the order row and checks that the run still owns it (`claim_id`), that it is still
 * `fulfilling` and that no cancellation was requested. A cancellation sets `cancel_requested_at`
 * under the same row lock (`fenceForCancel`, or the admin API), so for every interleaving exactly
 * one of the two goes first: either the step's write lands and the cleanup, which reads after its
 * fence, undoes it; or the write is refused and the step undoes its own side effect.
 */
export interface FulfilmentRecords {
  recordCapture(capture: CaptureRecord): Promise<Guarded<{ paymentId: string }>>;
  recordShipment(input: ShipmentRecordInput): Promise<Guarded<null>>;
  fenceForCancel(orderId: string): Promise<FenceOutcome>;
  /**
   * Marks the label purchase begun, under the same guard as recordShipment plus the hold: `go`
   * when the run may ask the carrier; else why not (`held`: a hold landed after the run's last
   * look; `booked`: a retried step whose record already landed, so it goes on to find it).
   */
  beginLabelPurchase(orderId: string, claimId: string): Promise<PurchaseStart>;
  /** Clears the mark after a failed attempt (a hold asked meanwhile stops waiting). */
  endLabelPurchase(orderId: string, claimId: string): Promise<void>;
  /**
   * After a refused record: whether the order still wants the labels the refused run bought. Yes
   * when they are recorded as its parcels (another run landed them), or when the order is still
   * being fulfilled by another run (a re-drive), which finds them again by their carrier reference;
   * no once the order is cancelled, being cancelled, or ended without them.
   */
  labelsStillWanted(orderId: string, trackingNumbers: readonly string[]): Promise<boolean>;
}

export type PurchaseStart = "go" | "booked" | "held" | GuardRefusal;

/** How long a label purchase's mark keeps a hold waiting (an attempt that died leaves it set). */
export const labelPurchaseLeaseMs = 2 * 60 * 1000;

const shippedStatuses: readonly OrderStatus[] = ["shipped", "delivered", "completed"];

/** What the guard saw of the order under its row lock: the state before this write. */
export interface GuardRow {
  claim_id: string | null;
  status: OrderStatus;
  cancel_requested: boolean;
}

/**
 * The guard of every write below, as the head of one statement: the order row locked first
 * (FOR UPDATE returns its latest committed version, after any cancel or re-drive that holds the
 * lock), then `go` has a row only while `$2` owns it, it is `fulfilling` and no cancel was
 * requested. The writes that follow select FROM go, so they land together or not at all; one
 * autocommit statement is as atomic as the transaction it replaces, in one round trip.
 */
const guardHead = `
  WITH ord AS (
    SELECT claim_id, status::text AS status, cancel_requested_at FROM orders
    WHERE id = $1::uuid FOR UPDATE
  ),
  go AS (SELECT 1 FROM ord WHERE claim_id = $2 AND status = 'fulfilling' AND cancel_requested_at IS NULL)`;
const guardTail = `SELECT claim_id, status, cancel_requested_at IS NOT NULL AS cancel_requested FROM ord`;

/** What the fence saw of the order under its row lock. */
export interface FenceRow {
  status: OrderStatus;
  shipped: boolean;
}

/**
 * The cleanup's fence, one statement: the order row locked, then `cancel_requested_at` set unless
 * the order has shipped (a shipment row, or a shipped status) or was fenced already. One
 * autocommit statement on the pool, not an interactive transaction: under load Prisma's
 * interactive transaction failed to start within its wait ("Unable to start a transaction in the
 * given time") and the cleanup step had to be retried; a statement waits for a connection instead.
 * The status is read after the lock, so a shipment recorded while the fence waited is seen.
 */
export const fenceStatement = `
  WITH ord AS (
    SELECT o.id, o.status::text AS status, o.cancel_requested_at,
           EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id) AS shipped
    FROM orders o WHERE o.id = $1::uuid FOR UPDATE
  ),
  fenced AS (
    UPDATE orders SET cancel_requested_at = now()
    FROM ord
    WHERE orders.id = ord.id AND ord.cancel_requested_at IS NULL AND NOT ord.shipped
      AND ord.status NOT IN ('shipped', 'delivered', 'completed')
    RETURNING 1
  )
  SELECT status, shipped FROM ord`;

/** recordCapture: the guard, the payment row and its timeline entry, in one statement. */
export const recordCaptureStatement = `${guardHead},
        paid AS (
          INSERT INTO payments (id, order_id, provider_id, status, currency, amount_authorized,
                                amount_captured, amount_refunded, created_at, updated_at)
          SELECT $3::uuid, $1::uuid, $4, 'captured', $5, coalesce($9::int, $6), $6, coalesce($10::int, 0),
                 now(), now() FROM go
          ON CONFLICT (order_id) DO UPDATE SET status = 'captured',
            amount_captured = EXCLUDED.amount_captured, amount_authorized = EXCLUDED.amount_authorized,
            amount_refunded = greatest(payments.amount_refunded, EXCLUDED.amount_refunded),
            updated_at = now()
          RETURNING id
        ),
        entry AS (
          INSERT INTO order_timeline (order_id, kind, detail, run_id)
          SELECT $1::uuid, ${timelineKindSql("payment-captured")}, $7::jsonb, $8 FROM go
          ON CONFLICT DO NOTHING
        )
        SELECT claim_id, status, cancel_requested_at IS NOT NULL AS cancel_requested,
               (SELECT id FROM paid) AS payment_id
        FROM ord`;

/**
 * recordShipment: the guard, one shipments row per parcel, the order moved and its timeline
 * entry, in one statement: every parcel lands with the order's move to `shipped`, or none does.
 * The parcels arrive as one JSON array ($3), so the statement stays one round trip for any count.
 */
export const recordShipmentStatement = `${guardHead},
        booked AS (
          INSERT INTO shipments (id, order_id, parcel_number, generation, lines, carrier, tracking_number,
                                 tracking_url, service, label_url, provider_id, label_cost, label_currency,
                                 status, created_at, updated_at)
          SELECT gen_random_uuid(), $1::uuid, p.parcel_number, 0, p.lines, p.carrier, p.tracking_number,
                 p.tracking_url, p.service, p.label_url, p.provider_id, p.label_cost, p.label_currency,
                 'booked', now(), now()
          FROM go, jsonb_to_recordset($3::jsonb) AS p(parcel_number int, lines jsonb, carrier text,
               tracking_number text, tracking_url text, service text, label_url text, provider_id text,
               label_cost int, label_currency text)
          ON CONFLICT DO NOTHING
        ),
        moved AS (
          UPDATE orders o SET status = $4::order_status, label_purchase_started_at = NULL, updated_at = now()
          FROM go WHERE o.id = $1::uuid
        ),
        entry AS (
          INSERT INTO order_timeline (order_id, kind, detail, run_id)
          SELECT $1::uuid, $5, $6::jsonb, $7 FROM go
          ON CONFLICT DO NOTHING
        )
        ${guardTail}`;

/**
 * beginLabelPurchase: the guard (plus no hold but the run's own fulfilment window), then the
 * mark, in one statement under the order's row lock: a hold placed before it is seen here, a hold
 * asked after it sees the mark (hold-order.ts waits for the purchase to settle).
 */
export const beginLabelPurchaseStatement = `${guardHead.replace(
  "cancel_requested_at FROM orders",
  "cancel_requested_at, hold_reason FROM orders",
)},
        held AS (SELECT 1 FROM ord, go WHERE ord.hold_reason IS NOT NULL AND ord.hold_reason <> 'fulfilment_window'),
        marked AS (
          UPDATE orders o SET label_purchase_started_at = now()
          FROM go WHERE o.id = $1::uuid AND NOT EXISTS (SELECT 1 FROM held)
          RETURNING 1
        ),
        -- Stopped by the hold: its release resumes fulfilment (decision 0201, hold-order.ts).
        stopped AS (
          UPDATE orders o SET hold_stopped_run_at = now()
          FROM held WHERE o.id = $1::uuid
          RETURNING 1
        )
        SELECT claim_id, status, cancel_requested_at IS NOT NULL AS cancel_requested,
               EXISTS (SELECT 1 FROM held) AS held, EXISTS (SELECT 1 FROM marked) AS marked
        FROM ord`;

function verdict(row: GuardRow | undefined, claimId: string): "write" | GuardRefusal {
  if (!row || row.claim_id !== claimId) return "superseded";
  if (row.status === "fulfilling" && !row.cancel_requested) return "write";
  return "cancelled";
}

export function createFulfilmentRecords(
  db: Database,
  options: { onTransition?: (to: OrderStatus) => void } = {},
): FulfilmentRecords {
  const sql = sqlPool(db);

  return {
    async recordCapture(capture) {
      const { orderId, claimId, runId, paymentIntentId, amountCaptured, currency } = capture;
      const detail = { paymentIntentId, amountCaptured, currency, alreadyCaptured: capture.alreadyCaptured };
      const { rows } = await sql.query<GuardRow & { payment_id: string | null }>(recordCaptureStatement, [
        orderId,
        claimId,
        randomUUID(),
        paymentIntentId,
        currency,
        amountCaptured,
        JSON.stringify(detail),
        runId,
        capture.amountAuthorized ?? null,
        capture.amountRefunded ?? null,
      ]);
      const row = rows[0];
      const decided = verdict(row, claimId);
      if (decided !== "write") return { landed: false, reason: decided };
      if (!row?.payment_id) throw new Error(`recordCapture: no payment row written for order ${orderId}`);
      return { landed: true, value: { paymentId: row.payment_id } };
    },

    async recordShipment({ orderId, claimId, runId, parcels }) {
      // Digital-only (no parcels): nothing to ship, so the order is delivered once the money is taken.
      const to: OrderStatus = parcels === null ? "delivered" : "shipped";
      const first = parcels?.[0];
      const entry: { kind: TimelineKind; detail: Record<string, unknown> } =
        parcels === null || !first
          ? { kind: "nothing-to-ship", detail: {} }
          : {
              kind: "shipment-booked",
              // Parcel 1 at the top, as the entry read before orders had several parcels.
              detail: {
                carrier: first.carrier,
                trackingNumber: first.trackingNumber,
                trackingUrl: first.trackingUrl,
                parcels: parcels.map(({ parcelNumber, carrier, trackingNumber }) => ({
                  parcelNumber,
                  carrier,
                  trackingNumber,
                })),
              },
            };
      const rowsIn = (parcels ?? []).map((parcel) => ({
        parcel_number: parcel.parcelNumber,
        lines: parcel.lines.map(({ sku, quantity }) => ({ sku, quantity })),
        carrier: parcel.carrier,
        tracking_number: parcel.trackingNumber,
        tracking_url: parcel.trackingUrl,
        service: parcel.service ?? null,
        label_url: parcel.labelUrl ?? null,
        provider_id: parcel.providerId ?? null,
        label_cost: parcel.labelAmount ?? null,
        label_currency: parcel.labelCurrency ?? null,
      }));
      const { rows } = await sql.query<GuardRow>(recordShipmentStatement, [
        orderId,
        claimId,
        JSON.stringify(rowsIn),
        to,
        entry.kind,
        JSON.stringify(entry.detail),
        runId,
      ]);
      const row = rows[0];
      const decided = verdict(row, claimId);
      if (decided === "write") {
        options.onTransition?.(to);
        return { landed: true, value: null };
      }
      // A retried step (after a crash, or the replay of one that succeeded) finds its write landed.
      if (decided === "cancelled" && row && shippedStatuses.includes(row.status))
        return { landed: true, value: null };
      return { landed: false, reason: decided };
    },

    async beginLabelPurchase(orderId, claimId) {
      const { rows } = await sql.query<GuardRow & { held: boolean; marked: boolean }>(
        beginLabelPurchaseStatement,
        [orderId, claimId],
      );
      const row = rows[0];
      if (row?.marked) return "go";
      if (row?.held) return "held";
      const decided = verdict(row, claimId);
      if (decided === "write") return "go";
      if (decided === "cancelled" && row && shippedStatuses.includes(row.status)) return "booked";
      return decided;
    },

    async endLabelPurchase(orderId, claimId) {
      await sql.query(
        `UPDATE orders SET label_purchase_started_at = NULL WHERE id = $1::uuid AND claim_id = $2`,
        [orderId, claimId],
      );
    },

    async labelsStillWanted(orderId, trackingNumbers) {
      const { rows } = await sql.query<{ status: OrderStatus; cancel_requested: boolean; recorded: boolean }>(
        `SELECT o.status::text AS status, o.cancel_requested_at IS NOT NULL AS cancel_requested,
                EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id AND s.superseded_at IS NULL
                          AND s.label_refund_status IS NULL AND s.tracking_number = ANY($2::text[])) AS recorded
         FROM orders o WHERE o.id = $1::uuid`,
        [orderId, [...trackingNumbers]],
      );
      const row = rows[0];
      if (!row) return false;
      return labelWanted({
        status: row.status,
        cancelRequested: row.cancel_requested,
        recorded: row.recorded,
      });
    },

    async fenceForCancel(orderId) {
      const { rows } = await sql.query<FenceRow>(fenceStatement, [orderId]);
      const order = rows[0];
      if (!order) return "not-found";
      return order.shipped || shippedStatuses.includes(order.status) ? "shipped" : "fenced";
    },
  };
}
