/**
 * What fulfilment needs from a payment provider. Every call takes an idempotency key so a
 * retried workflow step can repeat it without charging, voiding or refunding twice.
 */
export type AuthorizationState = "requires_capture" | "succeeded" | "canceled" | "processing" | "other";

export interface PaymentIntentView {
  id: string;
  state: AuthorizationState;
  amount: number;
  amountCaptured: number;
  amountRefunded: number;
  currency: string;
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

export interface PaymentGateway {
  retrieve(paymentIntentId: string): Promise<PaymentIntentView>;
  capture(paymentIntentId: string, idempotencyKey: string): Promise<CaptureResult>;
  voidAuthorization(paymentIntentId: string, idempotencyKey: string): Promise<VoidResult>;
  refundInFull(paymentIntentId: string, idempotencyKey: string): Promise<RefundResult>;
}

/**
 * The customer's money cannot be taken and retrying will not change that: a decline, an
 * authorization that expired or was voided. Workflow steps turn it into a NonRetriableError.
 */
export class PaymentRejectedError extends Error {
  constructor(
    readonly reason: "declined" | "authorization_expired" | "authentication_required" | "unexpected_state",
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options);
    this.name = "PaymentRejectedError";
  }
}
