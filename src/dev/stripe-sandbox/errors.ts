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

export type DeclineCode = "card_declined" | "authentication_required" | "insufficient_funds" | "expired_card";

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
