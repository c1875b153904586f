import Stripe from "stripe";
import { AppError } from "../errors";
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

    // No look at the PaymentIntent first: Stripe's capture answers every state the look told
    // apart, in one call instead of two. Ours again (the same idempotency key): Stripe replays the
    // first answer, marked `Idempotent-Replayed`. Captured by someone else, canceled, or in any
    // state but requires_capture: payment_intent_unexpected_state with the PaymentIntent as it is.
    // An expired authorization: charge_expired_for_capture (or, before Stripe's expiry run,
    // capture_charge_authorization_expired). test/payments/stripe-payment-gateway.test.ts holds each.
    async capture(paymentIntentId, idempotencyKey, amountToCapture) {
      let captured: Stripe.Response<Stripe.PaymentIntent>;
      try {
        captured = await stripe.paymentIntents.capture(
          paymentIntentId,
          amountToCapture === undefined ? {} : { amount_to_capture: amountToCapture },
          { idempotencyKey },
        );
      } catch (error) {
        const intent = error instanceof Stripe.errors.StripeError ? error.payment_intent : undefined;
        if (
          error instanceof Stripe.errors.StripeError &&
          error.code === "payment_intent_unexpected_state" &&
          intent
        ) {
          // Captured before this call (another attempt without our key): the money is taken, not lost.
          if (intent.status === "succeeded") return alreadyCaptured(intent);
          if (intent.status === "canceled") {
            const lapsed = isLapsedAuthorization(intent.cancellation_reason);
            throw new PaymentRejectedError(
              lapsed ? "authorization_expired" : "unexpected_state",
              `PaymentIntent ${paymentIntentId} was canceled before capture (cancellation_reason ${intent.cancellation_reason ?? "none"})`,
              { cause: error },
            );
          }
          throw new PaymentRejectedError(
            "unexpected_state",
            `PaymentIntent ${paymentIntentId} cannot be captured (${intent.status})`,
            { cause: error },
          );
        }
        throw rejectionOf(error) ?? error;
      }
      return {
        paymentIntentId,
        amountCaptured: captured.amount_received,
        currency: captured.currency,
        // A retried capture of ours: Stripe's replay of the capture that took the money.
        alreadyCaptured: captured.lastResponse?.headers?.["idempotent-replayed"] === "true",
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
      const refund = await stripe.refunds
        .create({ payment_intent: paymentIntentId }, { idempotencyKey })
        .catch((error: unknown) => refusedAsDisputed(error, paymentIntentId));
      return { paymentIntentId, refundId: refund.id, amountRefunded: refund.amount };
    },

    // Stripe's way to charge a card saved at checkout while the customer is away: confirm at
    // once, off_session. A bank that wants the customer present answers 402
    // authentication_required with the PaymentIntent attached (requires_payment_method); that,
    // like a decline, is saved under the key, so a retry is told the same and charges nothing.
    async chargeOffSession(charge, idempotencyKey) {
      let intent: Stripe.Response<Stripe.PaymentIntent>;
      try {
        intent = await stripe.paymentIntents.create(
          {
            amount: charge.amount,
            currency: charge.currency.toLowerCase(),
            customer: charge.customerId,
            payment_method: charge.paymentMethodId,
            off_session: true,
            confirm: true,
            metadata: charge.metadata,
          },
          { idempotencyKey },
        );
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError) {
          const reason = error.code === "authentication_required" ? "authentication_required" : "declined";
          throw new PaymentRejectedError(reason, error.message, {
            cause: error,
            code: error.decline_code ?? error.code,
            paymentIntentId: error.payment_intent?.id ?? null,
          });
        }
        throw error;
      }
      if (intent.status !== "succeeded") {
        // Off-session, nothing can act on a next_action: the charge did not happen.
        throw new PaymentRejectedError(
          "authentication_required",
          `PaymentIntent ${intent.id} is ${intent.status} after an off-session confirmation`,
          { paymentIntentId: intent.id },
        );
      }
      return {
        paymentIntentId: intent.id,
        amount: intent.amount_received,
        currency: intent.currency,
        replayed: intent.lastResponse?.headers?.["idempotent-replayed"] === "true",
      };
    },

    async refundAmount(paymentIntentId, amount, idempotencyKey) {
      const refund = await stripe.refunds
        .create({ payment_intent: paymentIntentId, amount }, { idempotencyKey })
        .catch((error: unknown) => refusedAsDisputed(error, paymentIntentId));
      return { paymentIntentId, refundId: refund.id, amountRefunded: refund.amount };
    },
  };
}

/**
 * Stripe refuses to refund a charged-back charge (`charge_disputed`): the cardholder gets the money
 * through the dispute. That is an answer, not an outage: the callers tell ops instead of retrying.
 */
function refusedAsDisputed(error: unknown, paymentIntentId: string): never {
  if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "charge_disputed") {
    throw new AppError("charge_disputed", `Stripe refused the refund: ${error.message}`, {
      cause: error,
      details: { paymentIntentId, disputes: [] as string[] },
    });
  }
  throw error;
}
