import type Stripe from "stripe";
import type { OrderStatus } from "../../generated/prisma/enums";

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
      /** The address Checkout collected, stored on the order with the transition (issue 13). */
      shippingAddress?: StoredShippingAddress | null;
    }
  | { kind: "authorization-lost"; paymentIntentId: string; reason: string };

/** Asks Stripe (not the webhook payload) what state a PaymentIntent is in. */
export type PaymentIntentStatusLookup = (paymentIntentId: string) => Promise<Stripe.PaymentIntent.Status>;

/**
 * The `from` sets make every ordering converge: a status only ever moves forward, so a late
 * `checkout.session.completed` after `async_payment_succeeded` (or a duplicate of anything)
 * finds the order past its `from` and changes nothing.
 */
const beforePayment: readonly OrderStatus[] = ["pending", "payment_processing"];

/** An order's `shipping_address` column (read back by src/shipping/shipping-destinations.ts). */
export interface StoredShippingAddress {
  name?: string;
  phone?: string;
  line1: string;
  line2?: string;
  city: string;
  state?: string;
  postalCode: string;
  country: string;
}

type ShippingDetails = { name?: string | null; address?: Stripe.Address | null } | null | undefined;

/**
 * The shipping address the customer entered on Checkout. API versions since 2025-03-31 put it at
 * `collected_information.shipping_details`; endpoints pinned to older versions (2024-04-10, say)
 * deliver it as the session's top-level `shipping_details`. Both are read, so the webhook
 * endpoint's version does not matter. The phone, when collected, is in `customer_details`.
 */
export function shippingAddressOf(session: Stripe.Checkout.Session): StoredShippingAddress | null {
  const legacy = (session as { shipping_details?: ShippingDetails }).shipping_details;
  const details: ShippingDetails = session.collected_information?.shipping_details ?? legacy;
  const address = details?.address;
  if (!details || !address?.line1 || !address.city || !address.postal_code || !address.country) return null;
  const phone = session.customer_details?.phone;
  return {
    ...(details.name ? { name: details.name } : {}),
    ...(phone ? { phone } : {}),
    line1: address.line1,
    ...(address.line2 ? { line2: address.line2 } : {}),
    city: address.city,
    ...(address.state ? { state: address.state } : {}),
    postalCode: address.postal_code,
    country: address.country,
  };
}

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
    shippingAddress: shippingAddressOf(session),
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
): { checkoutSessionId: string } | { paymentIntentId: string } | { ignore: string } {
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
    default:
      return { ignore: `event type ${event.type} is not handled` };
  }
}

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
        shippingAddress: shippingAddressOf(session),
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
      const reason =
        intent.cancellation_reason === "automatic"
          ? "The card authorization expired before it was captured"
          : `The card authorization was voided outside this service (${intent.cancellation_reason ?? "no reason given"})`;
      return { kind: "authorization-lost", paymentIntentId: intent.id, reason };
    }
    default:
      return { kind: "ignore", reason: `event type ${event.type} is not handled` };
  }
}
