import Stripe from "stripe";
import {
  PaymentRejectedError,
  type AuthorizationState,
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
    amount: intent.amount,
    amountCaptured: intent.amount_received,
    amountRefunded: charge?.amount_refunded ?? 0,
    currency: intent.currency,
  };
}

/** Stripe errors that no retry can fix become PaymentRejectedError; the rest propagate as-is. */
function rejectionOf(error: unknown): PaymentRejectedError | undefined {
  if (!(error instanceof Stripe.errors.StripeError)) return undefined;
  if (error.type === "StripeCardError") {
    const reason = error.code === "authentication_required" ? "authentication_required" : "declined";
    return new PaymentRejectedError(reason, error.message, { cause: error });
  }
  if (error.code === "payment_intent_unexpected_state" || error.code === "charge_expired_for_capture") {
    return new PaymentRejectedError("authorization_expired", error.message, { cause: error });
  }
  return undefined;
}

async function rethrowing<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw rejectionOf(error) ?? error;
  }
}

export function createStripePaymentGateway(stripe: Stripe): PaymentGateway {
  const retrieve = async (id: string) =>
    toView(await stripe.paymentIntents.retrieve(id, { expand: ["latest_charge"] }));

  return {
    retrieve,

    async capture(paymentIntentId, idempotencyKey) {
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
        throw new PaymentRejectedError(
          "authorization_expired",
          `PaymentIntent ${paymentIntentId} was canceled before capture`,
        );
      }
      if (current.state !== "requires_capture") {
        throw new PaymentRejectedError(
          "unexpected_state",
          `PaymentIntent ${paymentIntentId} cannot be captured (${current.state})`,
        );
      }
      const captured = await rethrowing(() =>
        stripe.paymentIntents.capture(paymentIntentId, {}, { idempotencyKey }),
      );
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
  };
}
