/**
 * Every kind of entry on an order's timeline (the `order_timeline` table), in one place: ops read
 * them in the console, the "needs attention" filters and the recovery sweeps query them, and the
 * workflow adopts an outcome from them. A new kind is added here, or it does not type-check
 * (docs/architecture.md, "Adding a timeline kind").
 */
export const timelineKinds = [
  // Checkout and the Stripe intake (src/orders/checkout, src/orders/intake).
  "checkout-started",
  "checkout-session-created",
  "checkout-failed",
  "checkout-expired",
  "checkout-payment-declined",
  "checkout-payment-failed",
  "payment-authorized",
  "payment-processing",
  "payment-received",
  "payment-not-required",
  "payment-mismatch",
  "authorization-lost",
  "order-placed-sent",
  // Stock held at checkout and given back (src/inventory/stock-holds.ts).
  "stock-hold-released",
  // The fulfilment run and its undos (src/inngest/steps), one per (order, kind, run).
  "claimed",
  "claim-lost",
  "stock-reserved",
  "out-of-stock",
  // Partial fulfilment (PARTIAL_FULFILMENT=ship_available): lines short at the reservation, the
  // capture of the shipped lines only (the rest of the hold released) or the refund of the short
  // lines when the money was taken already, and the one e-mail that tells the customer which.
  "lines-short",
  "short-lines-not-charged",
  "short-lines-refunded",
  // The short lines' refund not asked: the charge is disputed, the money goes through the dispute.
  "short-lines-refund-withheld",
  "short-lines-notice-sent",
  "stock-released",
  "payment-captured",
  "payment-captured-after-cancel",
  "authorization-voided",
  "payment-refunded",
  "payment-not-returned",
  "shipment-booked",
  "shipment-voided",
  // A label bought by a run a re-drive superseded, kept for the new run (decision 0170): the cleanup
  // hands it back if the order is cancelled before the new run records it.
  "label-kept-for-redrive",
  // The label bought beside the shipping option the customer paid for (issue 39): its service
  // (or the fallback's), what the customer paid and what the label cost, and the difference.
  "shipping-label-vs-quote",
  "nothing-to-ship",
  "confirmation-sent",
  "delivered",
  "review-requested",
  "cancelled",
  "cancelled-out-of-stock",
  "payment-failed",
  "cancel-needs-ops",
  // Failures, as ops see them in the console (src/orders/run-failures.ts).
  "step-failed",
  "run-failed",
  // Admin actions and the customer's review (src/orders, src/notifications/resend-email.ts).
  "cancel-requested",
  "redriven",
  "refund-requested",
  "refund-issued",
  "refund-failed",
  // A refund that landed beyond the capture (a cancel's cleanup refunded meanwhile): ops told.
  "refund-over-captured",
  "email-resent",
  "review-received",
  // Labels handed back to the carrier, holds, address checks (src/shipping/label-void.ts,
  // src/orders/hold-order.ts).
  "label-refund-requested",
  "label-refunded",
  "label-refund-rejected",
  "label-not-voided",
  "hold-placed",
  "hold-released",
  "address-undeliverable",
  "address-corrected",
  "carrier-exception",
  // A parcel delivered while others of the order are still on their way; a parcel re-shipped
  // with a new label (src/shipping/carrier-webhook.ts, src/shipping/reship-parcel.ts).
  "parcel-delivered",
  "parcel-reshipped",
  // Returns after delivery (src/returns, src/inngest/functions/process-return.ts).
  "return-requested",
  "return-approved",
  "return-rejected",
  "return-cancelled",
  "return-label-created",
  "return-label-sent",
  "return-label-refund-requested",
  "return-in-transit",
  "return-received",
  "return-refunded",
  // A charged-back payment: the return's refund is left to the dispute.
  "return-refund-withheld",
  // Stripe refused the return's refund: the payment was already refunded there (the Dashboard).
  "return-refunded-at-stripe",
  // recover-stalled-returns started the run of a return whose event was lost (a crash).
  "return-run-recovered",
  "return-restocked",
  "return-written-off",
  "return-closed",
  "exchange-reserved",
  "exchange-released",
  "exchange-shipped",
  "exchange-sent",
  "exchange-delivered",
  // The exchange's parcel could not be booked, every retry spent: its items released, its charge refunded.
  "exchange-failed",
  // A dearer exchange's difference, charged off-session once (or refused by the bank), and the
  // undo's refund of it when the exchange ended before it shipped.
  "exchange-charged",
  "exchange-charge-failed",
  "exchange-charge-refunded",
  // The bank wanted the customer present: the Checkout page for the difference e-mailed; paid
  // there (exchange-charged), or expired unpaid and the exchange closed.
  "exchange-checkout-sent",
  "exchange-unpaid",
  // The recovery sweeps (src/recovery).
  "recovery-re-emitted",
  "authorization-expiry-alerted",
  // Refunds made at Stripe outside this service (src/orders/intake/refund-events.ts).
  "refund-recorded",
  "refund-needs-ops",
  // Disputes and Radar at Stripe (src/orders/intake/risk-events.ts).
  "dispute-updated",
  "radar-review",
  "early-fraud-warning",
] as const;

export type TimelineKind = (typeof timelineKinds)[number];

/** Detail of an entry: a JSON object. */
export type TimelineDetail = Record<string, unknown>;

export function isTimelineKind(kind: string): kind is TimelineKind {
  return (timelineKinds as readonly string[]).includes(kind);
}

/**
 * A kind as an SQL string literal, for the statements that write their entry inside the statement
 * that moves the order (one round trip): the kind still comes from this one definition.
 */
export function timelineKindSql(kind: TimelineKind): string {
  return `'${kind}'`;
}
