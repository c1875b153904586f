import type Stripe from "stripe";
import type { OrderStatus } from "../../generated/prisma/enums";
import { isLapsedAuthorization } from "../../payments/payment-gateway";

/** What one Stripe event asks of our orders. */
export type IntakePlan =
  | { kind: "ignore"; reason: string }
  | {
      kind: "transition";
      checkoutSessionId: string;
      from: readonly OrderStatus[];
      to: OrderStatus;
      paymentIntentId: string | null;
      timelineKind: string;
    }
  | { kind: "authorization-lost"; paymentIntentId: string; reason: string }
  | { kind: "declined"; orderId: string; detail: { code: string; declineCode?: string; message: string } };

/** Asks Stripe (not the webhook payload) what state a PaymentIntent is in. */
export type PaymentIntentStatusLookup = (paymentIntentId: string) => Promise<Stripe.PaymentIntent.Status>;

/**
 * The `from` sets make every ordering converge: a status only ever moves forward, so a late
 * `checkout.session.completed` after `async_payment_succeeded` (or a duplicate of anything)
 * finds the order past its `from` and changes nothing.
 */
const beforePayment: readonly OrderStatus[] = ["pending", "payment_processing"];

/** Our own compensation voids authorizations with this reason (src/payments/stripe-payment-gateway.ts). */
const ownVoidReason = "abandoned";

function idOf(value: string | { id: string } | null): string | null {
  if (value === null) return null;
  return typeof value === "string" ? value : value.id;
}

async function planCompleted(
  session: Stripe.Checkout.Session,
  lookup: PaymentIntentStatusLookup,
): Promise<IntakePlan> {
  if (session.mode !== "payment") return { kind: "ignore", reason: `mode ${session.mode}` };
  const paymentIntentId = idOf(session.payment_intent);
  const transition = (to: OrderStatus, from: readonly OrderStatus[], timelineKind: string): IntakePlan => ({
    kind: "transition",
    checkoutSessionId: session.id,
    from,
    to,
    paymentIntentId,
    timelineKind,
  });
  if (paymentIntentId === null) {
    return session.payment_status === "no_payment_required"
      ? transition("paid", beforePayment, "payment-not-required")
      : { kind: "ignore", reason: "completed session without a PaymentIntent" };
  }
  // The payload's payment_status cannot tell a manual-capture authorization from a delayed
  // payment method (both "unpaid"), and is a snapshot: Stripe's current answer decides.
  const status = await lookup(paymentIntentId);
  switch (status) {
    case "succeeded":
      return transition("paid", beforePayment, "payment-received");
    case "requires_capture":
      return transition("authorized", ["pending"], "payment-authorized");
    case "processing":
      return transition("payment_processing", ["pending"], "payment-processing");
    case "requires_payment_method":
    case "canceled":
      return transition("payment_failed", beforePayment, "checkout-payment-failed");
    default:
      return { kind: "ignore", reason: `PaymentIntent ${paymentIntentId} is ${status}` };
  }
}

/** Which order an event is about (without asking anyone), or why it concerns none. */
export function orderKeyOf(
  event: Stripe.Event,
): { checkoutSessionId: string } | { paymentIntentId: string } | { orderId: string } | { ignore: string } {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
    case "checkout.session.async_payment_failed":
    case "checkout.session.expired":
      return { checkoutSessionId: event.data.object.id };
    case "payment_intent.canceled":
      return event.data.object.cancellation_reason === ownVoidReason
        ? { ignore: "voided by our own compensation" }
        : { paymentIntentId: event.data.object.id };
    case "payment_intent.payment_failed": {
      // A decline at checkout: the PaymentIntent is not on the order yet, its metadata names it.
      const orderId = event.data.object.metadata?.orderId;
      return typeof orderId === "string" && uuidPattern.test(orderId)
        ? { orderId }
        : { ignore: "payment_intent.payment_failed without our orderId" };
    }
    default:
      return { ignore: `event type ${event.type} is not handled` };
  }
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Decides what an event means for our orders; only `checkout.session.completed` asks Stripe. */
export async function planFor(event: Stripe.Event, lookup: PaymentIntentStatusLookup): Promise<IntakePlan> {
  switch (event.type) {
    case "checkout.session.completed":
      return planCompleted(event.data.object, lookup);
    case "checkout.session.async_payment_succeeded": {
      const session = event.data.object;
      return {
        kind: "transition",
        checkoutSessionId: session.id,
        from: beforePayment,
        to: "paid",
        paymentIntentId: idOf(session.payment_intent),
        timelineKind: "payment-received",
      };
    }
    case "checkout.session.async_payment_failed": {
      const session = event.data.object;
      return {
        kind: "transition",
        checkoutSessionId: session.id,
        from: beforePayment,
        to: "payment_failed",
        paymentIntentId: idOf(session.payment_intent),
        timelineKind: "checkout-payment-failed",
      };
    }
    case "checkout.session.expired":
      return {
        kind: "transition",
        checkoutSessionId: event.data.object.id,
        from: ["pending"],
        to: "expired",
        paymentIntentId: null,
        timelineKind: "checkout-expired",
      };
    case "payment_intent.canceled": {
      const intent = event.data.object;
      if (intent.cancellation_reason === ownVoidReason)
        return { kind: "ignore", reason: "voided by our own compensation" };
      const reason = isLapsedAuthorization(intent.cancellation_reason)
        ? "The card authorization expired before it was captured"
        : `The card authorization was voided outside this service (${intent.cancellation_reason ?? "no reason given"})`;
      return { kind: "authorization-lost", paymentIntentId: intent.id, reason };
    }
    case "payment_intent.payment_failed": {
      // The Checkout Session stays open and the customer may try another card: the order stays
      // pending, and its timeline says why the first attempt failed.
      const intent = event.data.object;
      const error = intent.last_payment_error;
      const orderId = intent.metadata?.orderId;
      if (typeof orderId !== "string") return { kind: "ignore", reason: "no orderId in the metadata" };
      return {
        kind: "declined",
        orderId,
        detail: {
          code: error?.code ?? "payment_failed",
          ...(error?.decline_code ? { declineCode: error.decline_code } : {}),
          message: error?.message ?? "The payment failed",
        },
      };
    }
    default:
      return { kind: "ignore", reason: `event type ${event.type} is not handled` };
  }
}
