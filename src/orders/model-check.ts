import type { Database } from "../db/client";
import { AppError } from "../errors";
import type { OrderStatus } from "../generated/prisma/enums";
import {
  decide,
  type LabelFacts,
  type OrderAction,
  type OrderFacts,
  type Verdict,
} from "../shared/order-model";
import { labelPurchaseLeaseMs } from "./fulfilment-records";

/**
 * The admin API's, the console's and the customer's actions ask the order model (decision 0170)
 * through here, first: the facts it needs, read in one statement, and its verdict. A refusal is
 * the model's code and reason. The SQL guard each action then runs stays the last word (the fence
 * against what changes between this read and the write); test/orders/order-model.test.ts keeps
 * the two agreeing.
 */

interface FactsRow {
  status: OrderStatus;
  cancel_requested: boolean;
  hold_reason: string | null;
  purchase_in_flight: boolean;
  captured: number;
  refunded: number;
  labels: { status: string; tracker_status: string | null; label_refund_status: string | null }[];
  run_failed: boolean;
}

/** The model's facts of one order, or null when there is no such order. */
export async function loadOrderFacts(db: Database, orderId: string): Promise<OrderFacts | null> {
  const [row] = await db.$queryRawUnsafe<FactsRow[]>(
    `
    SELECT o.status,
           o.cancel_requested_at IS NOT NULL AS cancel_requested,
           o.hold_reason,
           (o.label_purchase_started_at IS NOT NULL
            AND o.label_purchase_started_at > now() - make_interval(secs => $2::int / 1000.0)
            AND NOT EXISTS (SELECT 1 FROM shipments s WHERE s.order_id = o.id AND s.superseded_at IS NULL))
             AS purchase_in_flight,
           COALESCE(p.amount_captured, 0)::int AS captured,
           -- Refunds asked and not failed count (a pending one too), as the refund's own lock does.
           GREATEST(COALESCE(p.amount_refunded, 0),
                    COALESCE((SELECT sum(r.amount) FROM refunds r
                              WHERE r.order_id = o.id AND r.status <> 'failed'), 0))::int AS refunded,
           COALESCE((SELECT json_agg(json_build_object('status', s.status,
                                                       'tracker_status', s.tracker_status,
                                                       'label_refund_status', s.label_refund_status)
                                     ORDER BY s.parcel_number, s.generation)
                     FROM shipments s WHERE s.order_id = o.id AND s.superseded_at IS NULL), '[]'::json)
             AS labels,
           EXISTS (SELECT 1 FROM order_timeline t
                   WHERE t.order_id = o.id AND t.kind = 'run-failed'
                     AND t.created_at > COALESCE((SELECT max(r.created_at) FROM order_timeline r
                                                  WHERE r.order_id = o.id AND r.kind = 'redriven'),
                                                 '-infinity'::timestamptz)) AS run_failed
    FROM orders o
    LEFT JOIN payments p ON p.order_id = o.id
    WHERE o.id = $1::uuid`,
    orderId,
    labelPurchaseLeaseMs,
  );
  if (!row) return null;
  return {
    status: row.status,
    cancelRequested: row.cancel_requested,
    holdReason: row.hold_reason,
    labels: row.labels.map((label): LabelFacts => ({
      status: label.status === "delivered" ? "delivered" : "booked",
      trackerStatus: label.tracker_status,
      labelRefundStatus: label.label_refund_status,
    })),
    runFailed: row.run_failed,
    labelPurchaseInFlight: row.purchase_in_flight,
    captured: row.captured,
    refunded: row.refunded,
  };
}

/** How each action's refusal begins: "Order <id> cannot be <verb>: <the model's reason>". */
const verbs: Record<OrderAction, string> = {
  cancel: "cancelled",
  hold: "held",
  release: "released",
  refund: "refunded",
  reship: "re-shipped",
  redrive: "re-driven",
  "correct-address": "given a corrected address",
};

/** The model's refusal as the application error the doors answer with. */
export function refusal(
  orderId: string,
  action: OrderAction,
  verdict: Extract<Verdict, { allowed: false }>,
  options: { details?: Record<string, unknown>; more?: string } = {},
): AppError {
  return new AppError(
    verdict.code,
    `Order ${orderId} cannot be ${verbs[action]}: ${verdict.why}${options.more ? `; ${options.more}` : ""}`,
    options.details ? { details: options.details } : undefined,
  );
}

/** Reads the model's facts of an order (null: no such order); loadOrderFacts bound to the database. */
export type OrderFactsReader = (orderId: string) => Promise<OrderFacts | null>;

export const orderFactsReader =
  (db: Database): OrderFactsReader =>
  (orderId) =>
    loadOrderFacts(db, orderId);

export interface ModelCheck {
  facts: OrderFacts;
  verdict: Verdict;
}

/**
 * Reads the order's facts and asks the model about `action`. Unknown order: 404. A refusal the
 * caller may wait out (a label purchase in flight, for a hold) is returned, not thrown, when
 * `returnWaits` is set; every other refusal is thrown.
 */
export async function checkAction(
  read: OrderFactsReader,
  orderId: string,
  action: OrderAction,
  options: { returnWaits?: boolean } = {},
): Promise<ModelCheck> {
  const facts = await read(orderId);
  if (!facts) throw new AppError("order_not_found", `Order ${orderId} does not exist`);
  const verdict = decide(action, facts);
  if (!verdict.allowed && !(options.returnWaits && verdict.wait)) throw refusal(orderId, action, verdict);
  return { facts, verdict };
}
