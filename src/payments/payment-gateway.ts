/**
 * What fulfilment needs from a payment provider. Every call takes an idempotency key so a
 * retried workflow step can repeat it without charging, voiding or refunding twice.
 */
export type AuthorizationState = "requires_capture" | "succeeded" | "canceled" | "processing" | "other";

export interface PaymentIntentView {
  id: string;
  state: AuthorizationState;
  /** Why a canceled PaymentIntent was canceled (Stripe's `cancellation_reason`), else null. */
  cancellationReason?: string | null;
  amount: number;
  amountCaptured: number;
  /**
   * Captured money given back. Not Stripe's `charge.amount_refunded` as such: after a partial
   * capture Stripe counts the released remainder there too (see `refundedOfCaptured`).
   */
  amountRefunded: number;
  currency: string;
}

/**
 * What of a charge's captured money was refunded. Stripe's `amount_refunded` includes what a
 * partial capture released (authorized 7500, captured 5000: amount_refunded 2500 before any
 * refund), which is not money given back; an uncaptured charge has refunded nothing captured.
 */
export function refundedOfCaptured(charge: {
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  captured: boolean;
}): number {
  if (!charge.captured) return 0;
  return Math.max(0, charge.amount_refunded - (charge.amount - charge.amount_captured));
}

export interface CaptureResult {
  paymentIntentId: string;
  amountCaptured: number;
  currency: string;
  /** True when the money had already been taken (automatic capture, or a repeated step). */
  alreadyCaptured: boolean;
}

export interface VoidResult {
  paymentIntentId: string;
  outcome: "voided" | "already-voided" | "not-voidable";
  state: AuthorizationState;
}

export interface RefundResult {
  paymentIntentId: string;
  refundId: string;
  amountRefunded: number;
}

/** A charge of a card saved at checkout, made while the customer is not there (off-session). */
export interface OffSessionCharge {
  customerId: string;
  paymentMethodId: string;
  amount: number;
  currency: string;
  metadata: Record<string, string>;
}

export interface OffSessionChargeResult {
  paymentIntentId: string;
  amount: number;
  currency: string;
  /** True when Stripe replayed the first answer to this key (a retried step). */
  replayed: boolean;
}

export interface PaymentGateway {
  retrieve(paymentIntentId: string): Promise<PaymentIntentView>;
  /**
   * Captures the authorization: all of it, or `amountToCapture` (Stripe's partial capture, which
   * releases the rest of the hold at once; an authorization is captured only once).
   */
  capture(paymentIntentId: string, idempotencyKey: string, amountToCapture?: number): Promise<CaptureResult>;
  voidAuthorization(paymentIntentId: string, idempotencyKey: string): Promise<VoidResult>;
  refundInFull(paymentIntentId: string, idempotencyKey: string): Promise<RefundResult>;
  /** Refunds `amount` of the captured money (part of it), once per key. */
  refundAmount(paymentIntentId: string, amount: number, idempotencyKey: string): Promise<RefundResult>;
  /**
   * Charges a saved card off-session, once per key: the same key again (a retried step, a
   * re-driven run) gets Stripe's first answer, success or refusal, and never a second charge.
   * A refusal (authentication required, a decline) is a PaymentRejectedError carrying Stripe's
   * PaymentIntent id (`paymentIntentId`).
   */
  chargeOffSession(charge: OffSessionCharge, idempotencyKey: string): Promise<OffSessionChargeResult>;
}

export type PaymentRejectionReason =
  "declined" | "authorization_expired" | "authentication_required" | "unexpected_state";

/** What ops read (alerts, timeline) for each reason; the reason code itself is for machines. */
export const rejectionLabels: Record<PaymentRejectionReason, string> = {
  declined: "card declined",
  authorization_expired: "authorization expired",
  authentication_required: "authentication required",
  unexpected_state: "payment not capturable",
};

/**
 * The customer's money cannot be taken and retrying will not change that: a decline, an
 * authorization that expired or was voided. Workflow steps turn it into a NonRetriableError and
 * compensate once. The message starts with the label, so whatever shows it (the failed run's
 * alert, the timeline) says "authorization expired" in words.
 */
export class PaymentRejectedError extends Error {
  readonly label: string;

  /** The PaymentIntent Stripe made for a refused off-session charge, when it names one. */
  readonly paymentIntentId: string | null;

  constructor(
    readonly reason: PaymentRejectionReason,
    detail: string,
    options: { cause?: unknown; code?: string; paymentIntentId?: string | null } = {},
  ) {
    super(`${rejectionLabels[reason]}${options.code ? ` (${options.code})` : ""}: ${detail}`, options);
    this.name = "PaymentRejectedError";
    this.label = rejectionLabels[reason];
    this.paymentIntentId = options.paymentIntentId ?? null;
  }
}

/**
 * Stripe's `cancellation_reason` values that mean the authorization lapsed uncaptured: `expired`
 * in current API versions, `automatic` in older ones (before 2024-06). Anything else was a void.
 */
export const lapsedCancellationReasons: readonly string[] = ["expired", "automatic"];

export function isLapsedAuthorization(cancellationReason: string | null | undefined): boolean {
  return cancellationReason != null && lapsedCancellationReasons.includes(cancellationReason);
}
