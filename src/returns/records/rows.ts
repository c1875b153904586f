import type { ReturnActor, ReturnCondition } from "../return-policy";

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

export const returnColumns = `r.id, r.order_id, r.status, r.reason, r.note, r.requested_by, r.label_carrier,
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
export const holdingStatuses = `('requested', 'approved', 'received', 'closed')`;
