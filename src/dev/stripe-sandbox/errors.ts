import type Stripe from "stripe";

/**
 * Stripe's error envelope: `{ error: { type, code, message, param?, decline_code?, payment_intent? } }`.
 * The HTTP status matters as much as the body: stripe-node picks its error class from it
 * (402 → StripeCardError, 400/404 → StripeInvalidRequestError or StripeIdempotencyError, 5xx → StripeAPIError).
 */
export interface StripeErrorBody {
  type: "card_error" | "invalid_request_error" | "idempotency_error" | "api_error" | "authentication_error";
  code?: string;
  decline_code?: string;
  message: string;
  param?: string;
  payment_intent?: Stripe.PaymentIntent;
  doc_url?: string;
}

export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
  ) {
    super(body.message);
    this.name = "StripeApiError";
  }
}

const docUrl = (code: string): string => `https://stripe.com/docs/error-codes/${code.replace(/_/g, "-")}`;

/** Issuer declines: Stripe answers 402 `card_error` (stripe-node's StripeCardError). */
export type DeclineCode = "card_declined" | "authentication_required" | "insufficient_funds" | "expired_card";

/**
 * Why a capture of an authorized PaymentIntent fails other than by a decline: Stripe answers 400
 * `invalid_request_error` with these codes (stripe-node's StripeInvalidRequestError), not 402.
 * - `charge_expired_for_capture`: Stripe has already expired the uncaptured charge (its
 *   authorization window passed, the PaymentIntent is canceled with `cancellation_reason: expired`);
 * - `capture_charge_authorization_expired`: the window passed but Stripe has not processed the
 *   lapse yet (the PaymentIntent still says `requires_capture`); the network refuses the capture;
 * - `capture_unauthorized_payment`: the payment was never authorized (no hold to capture).
 * Stripe's error-code list documents the codes but not which one each case gets; this split is
 * the sandbox's reading (docs/stripe-sandbox.md).
 */
export type CaptureFailureCode =
  "charge_expired_for_capture" | "capture_charge_authorization_expired" | "capture_unauthorized_payment";

const captureFailureMessages: Record<CaptureFailureCode, string> = {
  charge_expired_for_capture:
    "The charge cannot be captured as the authorization has expired. Auth and capture charges must be captured within a set number of days (7 by default).",
  capture_charge_authorization_expired:
    "Cannot capture this charge because the authorization has expired. Auth and capture charges must be captured within a set number of days (7 by default).",
  capture_unauthorized_payment: "You cannot capture this unauthorized payment.",
};

const declineMessages: Record<DeclineCode, string> = {
  card_declined: "Your card was declined.",
  authentication_required: "Your card was declined. This transaction requires authentication.",
  insufficient_funds: "Your card has insufficient funds.",
  expired_card: "Your card has expired.",
};

export const stripeErrors = {
  missingApiKey: () =>
    new StripeApiError(401, {
      type: "invalid_request_error",
      message:
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
    }),
  invalidApiKey: () =>
    new StripeApiError(401, {
      type: "invalid_request_error",
      code: "api_key_expired",
      message: "Invalid API Key provided: the sandbox accepts keys that start with sk_ or rk_.",
    }),
  unknownRoute: (method: string, path: string) =>
    new StripeApiError(404, {
      type: "invalid_request_error",
      message: `Unrecognized request URL (${method}: ${path}). The Stripe sandbox implements only the endpoints this service calls.`,
    }),
  resourceMissing: (resource: string, id: string, param = "id") =>
    new StripeApiError(404, {
      type: "invalid_request_error",
      code: "resource_missing",
      param,
      message: `No such ${resource}: '${id}'`,
      doc_url: docUrl("resource_missing"),
    }),
  missingParam: (param: string) =>
    new StripeApiError(400, {
      type: "invalid_request_error",
      code: "parameter_missing",
      param,
      message: `Missing required param: ${param}.`,
      doc_url: docUrl("parameter_missing"),
    }),
  invalidParam: (param: string, message: string, code = "parameter_invalid_string") =>
    new StripeApiError(400, { type: "invalid_request_error", code, param, message }),
  unknownParam: (param: string, suggestion?: string) =>
    new StripeApiError(400, {
      type: "invalid_request_error",
      code: "parameter_unknown",
      param,
      message: `Received unknown parameter: ${param}${suggestion ? `. Did you mean ${suggestion}?` : ""}`,
      doc_url: docUrl("parameter_unknown"),
    }),
  captureFailed: (code: CaptureFailureCode, paymentIntent?: Stripe.PaymentIntent) =>
    new StripeApiError(400, {
      type: "invalid_request_error",
      code,
      message: captureFailureMessages[code],
      doc_url: docUrl(code),
      ...(paymentIntent ? { payment_intent: paymentIntent } : {}),
    }),
  unexpectedState: (paymentIntent: Stripe.PaymentIntent, message: string) =>
    new StripeApiError(400, {
      type: "invalid_request_error",
      code: "payment_intent_unexpected_state",
      message,
      payment_intent: paymentIntent,
      doc_url: docUrl("payment_intent_unexpected_state"),
    }),
  invalidRequest: (code: string, message: string, param?: string) =>
    new StripeApiError(400, { type: "invalid_request_error", code, message, ...(param ? { param } : {}) }),
  idempotencyMismatch: (key: string) =>
    new StripeApiError(400, {
      type: "idempotency_error",
      message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
    }),
  declined: (code: DeclineCode, paymentIntent?: Stripe.PaymentIntent) =>
    new StripeApiError(402, {
      type: "card_error",
      code: code === "authentication_required" ? "authentication_required" : "card_declined",
      decline_code: code === "card_declined" ? "generic_decline" : code,
      message: declineMessages[code],
      doc_url: docUrl(code === "authentication_required" ? "authentication_required" : "card_declined"),
      ...(paymentIntent ? { payment_intent: paymentIntent } : {}),
    }),
  apiError: () =>
    new StripeApiError(500, {
      type: "api_error",
      message: "An unknown error occurred in the Stripe sandbox (injected failure).",
    }),
  rateLimited: () =>
    new StripeApiError(429, {
      type: "invalid_request_error",
      code: "rate_limit",
      message: "Too many requests hit the API too quickly (injected failure).",
    }),
};
