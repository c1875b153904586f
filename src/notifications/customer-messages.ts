import type { OrderStatus } from "../generated/prisma/enums";
import type { TimelineKind } from "../timeline/kinds";
/**
 * The e-mails the workflow sends, one method each. Every method is idempotent by its e-mail
 * key (`shipped-<orderId>`, ...): calling it again after a successful send sends nothing.
 */
export interface EmailOutcome {
  idempotencyKey: string;
  /** `queued`: the mail server is unavailable; the outbox cron sends it later (see email-sender.ts). */
  status: "sent" | "already-sent" | "queued" | "undeliverable";
  messageId: string;
}

export interface ShipmentNotice {
  carrier: string;
  trackingNumber: string;
  trackingUrl: string;
  /** Which parcel of the order (1, 2, ...); unset in notices made before orders had several. */
  parcelNumber?: number;
}

export type PaymentSettlement = "refunded" | "voided" | "none";

/** What the short-lines e-mail says: the short lines (SKU, units missing, their price) and the money. */
export interface ShortLinesNotice {
  short: readonly { sku: string; short: number; amount: number }[];
  settlement: "not-charged" | "refunded" | "withheld";
}

/**
 * The order's timeline entry for an e-mail's outcome (its detail: the outcome), written in the
 * statement that records the outcome, once per (order, kind, run): the caller records none.
 */
export interface OutcomeRecord {
  kind: TimelineKind;
  runId: string;
}

/** An order's status change and its entry (the e-mail's outcome with `detail`), with the e-mail. */
export interface OrderCompletion extends OutcomeRecord {
  detail: Record<string, unknown>;
  from: readonly OrderStatus[];
  to: OrderStatus;
}

export interface CustomerMessages {
  /** The "on its way" e-mail, once per order, listing every parcel. */
  shipped(orderId: string, parcels: readonly ShipmentNotice[], record?: OutcomeRecord): Promise<EmailOutcome>;
  /** A re-shipped parcel's new tracking, once per new label (key `reshipped-<shipmentId>`). */
  reshipped(orderId: string, shipmentId: string, parcel: ShipmentNotice): Promise<EmailOutcome>;
  /**
   * The review request, once per order; `completion`, the order's move and its entry, is written
   * with the e-mail's outcome, in its statement (or one of its own when the outcome was an earlier
   * attempt's).
   */
  reviewRequest(orderId: string, completion?: OrderCompletion): Promise<EmailOutcome>;
  paymentFailed(orderId: string, reason: string): Promise<EmailOutcome>;
  outOfStock(orderId: string, sku: string, settlement: PaymentSettlement): Promise<EmailOutcome>;
  cancelled(orderId: string, settlement: PaymentSettlement): Promise<EmailOutcome>;
  /**
   * Part of the order could not be reserved (partial fulfilment): which lines ship, which do not,
   * and that those were not charged or were refunded. Once per order.
   */
  shortLines(orderId: string, notice: ShortLinesNotice): Promise<EmailOutcome>;
  /** The carrier cannot deliver to the address: a signed link to correct it. Once per hold. */
  addressUndeliverable(orderId: string, carrierMessage: string, holdId: string): Promise<EmailOutcome>;
  /** A carrier exception the customer must act on or wait out (pickup, failed attempt, return). */
  deliveryException(
    orderId: string,
    exception: {
      kind: "available_for_pickup" | "failure" | "return_to_sender";
      trackingNumber: string;
      carrierMessage?: string;
      /** Which label of the order: a parcel other than parcel 1's first label gets its own e-mail. */
      parcel?: { parcelNumber: number; generation: number };
    },
  ): Promise<EmailOutcome>;
}

export const emailKeys = {
  shipped: (orderId: string) => `shipped-${orderId}`,
  reshipped: (shipmentId: string) => `reshipped-${shipmentId}`,
  reviewRequest: (orderId: string) => `review-${orderId}`,
  paymentFailed: (orderId: string) => `payment-failed-${orderId}`,
  outOfStock: (orderId: string) => `out-of-stock-${orderId}`,
  cancelled: (orderId: string) => `cancelled-${orderId}`,
  shortLines: (orderId: string) => `short-lines-${orderId}`,
  addressCorrection: (orderId: string, holdId: string) => `address-${orderId}-${holdId}`,
  /** Parcel 1's first label keeps the key it had when orders had one parcel; other labels add theirs. */
  deliveryException: (
    orderId: string,
    status: string,
    parcel?: { parcelNumber: number; generation: number },
  ) =>
    parcel && (parcel.parcelNumber !== 1 || parcel.generation !== 0)
      ? `carrier-${status}-${orderId}-${parcel.parcelNumber}-${parcel.generation}`
      : `carrier-${status}-${orderId}`,
} as const;

const customerSafeReasons: Record<string, string> = {
  declined: "Your card was declined.",
  authentication_required: "Your bank asked for an authentication that was not completed.",
  authorization_expired: "The hold on your card expired before we could take the payment.",
};

/** The reason to show a customer, from a `<reason>: <detail>` failure message; never internal text. */
export function customerSafeReason(failure: string): string | undefined {
  const code = /(?:^|\s)(declined|authentication_required|authorization_expired):/.exec(failure)?.[1];
  return code ? customerSafeReasons[code] : undefined;
}
