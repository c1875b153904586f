import Stripe from "stripe";
import {
  isLapsedAuthorization,
  PaymentRejectedError,
  refundedOfCaptured,
  type AuthorizationState,
  type CaptureResult,
  type PaymentGateway,
  type PaymentIntentView,
} from "./payment-gateway";

const knownStates: readonly AuthorizationState[] = [
  "requires_capture",
  "succeeded",
  "canceled",
  "processing",
];

function toView(intent: Stripe.PaymentIntent): PaymentIntentView {
  const state = (knownStates as readonly string[]).includes(intent.status)
    ? (intent.status as AuthorizationState)
    : "other";
  const charge =
    typeof intent.latest_charge === "object" && intent.latest_charge !== null ? intent.latest_charge : null;
  return {
    id: intent.id,
    state,
    cancellationReason: intent.cancellation_reason ?? null,
    amount: intent.amount,
    amountCaptured: intent.amount_received,
    amountRefunded: charge ? refundedOfCaptured(charge) : 0,
    currency: intent.currency,
  };
}

/**
 * Stripe's capture answers that no retry can change, by error code. Declines are 402 card errors
 * (StripeCardError); the rest are 400 invalid_request_errors (StripeInvalidRequestError):
 * - `charge_expired_for_capture`: Stripe already expired the uncaptured charge;
 * - `capture_charge_authorization_expired`: the authorization lapsed at the network before
 *   Stripe's own expiry ran (the PaymentIntent may still read `requires_capture`);
 * - `capture_unauthorized_payment`: there is no authorization to capture.
 */
const invalidRequestRejections: Record<string, PaymentRejectedError["reason"]> = {
  charge_expired_for_capture: "authorization_expired",
  capture_charge_authorization_expired: "authorization_expired",
  capture_unauthorized_payment: "unexpected_state",
};

/** Stripe errors that no retry can fix become PaymentRejectedError; the rest propagate as-is. */
function rejectionOf(error: unknown): PaymentRejectedError | undefined {
  if (!(error instanceof Stripe.errors.StripeError)) return undefined;
  const code = error.code;
  if (error.type === "StripeCardError") {
    const reason = code === "authentication_required" ? "authentication_required" : "declined";
    return new PaymentRejectedError(reason, error.message, {
      cause: error,
      code: error.decline_code ?? code,
    });
  }
  if (error.type !== "StripeInvalidRequestError" || code === undefined) return undefined;
  const reason = invalidRequestRejections[code];
  if (reason) return new PaymentRejectedError(reason, error.message, { cause: error, code });
  if (code === "payment_intent_unexpected_state") {
    // Stripe attaches the PaymentIntent as it is now: a lapse reads canceled/expired.
    const intent = error.payment_intent;
    const lapsed = intent?.status === "canceled" && isLapsedAuthorization(intent.cancellation_reason);
    return new PaymentRejectedError(lapsed ? "authorization_expired" : "unexpected_state", error.message, {
      cause: error,
      code,
    });
  }
  return undefined;
}

function alreadyCaptured(intent: Stripe.PaymentIntent): CaptureResult {
  return {
    paymentIntentId: intent.id,
    amountCaptured: intent.amount_received,
    currency: intent.currency,
    alreadyCaptured: true,
  };
}

export function createStripePaymentGateway(stripe: Stripe): PaymentGateway {
  const retrieve = async (id: string) =>
    toView(await stripe.paymentIntents.retrieve(id, { expand: ["latest_charge"] }));

  return {
    retrieve,

    async capture(paymentIntentId, idempotencyKey, amountToCapture) {
      const current = await retrieve(paymentIntentId);
      if (current.state === "succeeded") {
        return {
          paymentIntentId,
          amountCaptured: current.amountCaptured,
          currency: current.currency,
          alreadyCaptured: true,
        };
      }
      if (current.state === "canceled") {
        const lapsed = isLapsedAuthorization(current.cancellationReason);
        throw new PaymentRejectedError(
          lapsed ? "authorization_expired" : "unexpected_state",
          `PaymentIntent ${paymentIntentId} was canceled before capture (cancellation_reason ${current.cancellationReason ?? "none"})`,
        );
      }
      if (current.state !== "requires_capture") {
        throw new PaymentRejectedError(
          "unexpected_state",
          `PaymentIntent ${paymentIntentId} cannot be captured (${current.state})`,
        );
      }
      let captured: Stripe.PaymentIntent;
      try {
        captured = await stripe.paymentIntents.capture(
          paymentIntentId,
          amountToCapture === undefined ? {} : { amount_to_capture: amountToCapture },
          { idempotencyKey },
        );
      } catch (error) {
        // Captured in between (another attempt without our key): the money is taken, not lost.
        const intent = error instanceof Stripe.errors.StripeError ? error.payment_intent : undefined;
        if (
          error instanceof Stripe.errors.StripeError &&
          error.code === "payment_intent_unexpected_state" &&
          intent?.status === "succeeded"
        ) {
          return alreadyCaptured(intent);
        }
        throw rejectionOf(error) ?? error;
      }
      return {
        paymentIntentId,
        amountCaptured: captured.amount_received,
        currency: captured.currency,
        alreadyCaptured: false,
      };
    },

    async voidAuthorization(paymentIntentId, idempotencyKey) {
      const current = await retrieve(paymentIntentId);
      if (current.state === "canceled")
        return { paymentIntentId, outcome: "already-voided", state: current.state };
      if (current.state !== "requires_capture")
        return { paymentIntentId, outcome: "not-voidable", state: current.state };
      const canceled = await stripe.paymentIntents.cancel(
        paymentIntentId,
        { cancellation_reason: "abandoned" },
        { idempotencyKey },
      );
      return { paymentIntentId, outcome: "voided", state: toView(canceled).state };
    },

    async refundInFull(paymentIntentId, idempotencyKey) {
      const refund = await stripe.refunds.create({ payment_intent: paymentIntentId }, { idempotencyKey });
      return { paymentIntentId, refundId: refund.id, amountRefunded: refund.amount };
    },

    async refundAmount(paymentIntentId, amount, idempotencyKey) {
      const refund = await stripe.refunds.create(
        { payment_intent: paymentIntentId, amount },
        { idempotencyKey },
      );
      return { paymentIntentId, refundId: refund.id, amountRefunded: refund.amount };
    },
  };
}
