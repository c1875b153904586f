import type Stripe from "stripe";
import type { OrderStatus } from "../../generated/prisma/enums";
import { breakdownOf, breakdownProblems, type MoneyBreakdown } from "../../payments/money-breakdown";
import { isLapsedAuthorization } from "../../payments/payment-gateway";
import type { ShippingAddress } from "../../shipping/shipping-provider";
import type { TimelineKind } from "../../timeline/kinds";

/** What one Stripe event asks of our orders. */
export type IntakePlan =
  | { kind: "ignore"; reason: string }
  | {
      kind: "transition";
      checkoutSessionId: string;
      from: readonly OrderStatus[];
      to: OrderStatus;
      paymentIntentId: string | null;
      timelineKind: TimelineKind;
      /** The address Checkout collected, stored on the order with the transition. */
      shippingAddress?: StoredShippingAddress | null;
      /** The card Checkout saved to a Customer (setup_future_usage), for later off-session charges. */
      savedCard?: { customerId: string; paymentMethodId: string } | null;
      /** Stripe's money breakdown of the session, recorded once with the order's placement. */
      money?: MoneyBreakdown | null;
    }
  | { kind: "authorization-lost"; paymentIntentId: string; reason: string }
  | { kind: "declined"; orderId: string; detail: { code: string; declineCode?: string; message: string } }
  /** Stripe's session or PaymentIntent is not this order's, or not for its amount: ops decide. */
  | { kind: "mismatch"; checkoutSessionId: string; reason: string; problems: string[] };

/** A Checkout Session and its PaymentIntent as Stripe reports them now (not the webhook payload). */
export interface CheckoutFacts {
  id: string;
  status: Stripe.Checkout.Session.Status | null;
  paymentStatus: Stripe.Checkout.Session.PaymentStatus;
  clientReferenceId: string | null;
  metadataOrderId: string | null;
  amountTotal: number | null;
  /** The lines at their prices, before discount, shipping and tax (null from an older double). */
  amountSubtotal?: number | null;
  currency: string | null;
  /** Stripe's breakdown (subtotal, shipping, discount, tax, per line), when the session has it. */
  money?: MoneyBreakdown | null;
  paymentIntent: {
    id: string;
    status: Stripe.PaymentIntent.Status;
    amount: number;
    currency: string;
    metadataOrderId: string | null;
    /** The Customer the card was saved to and the card, when Checkout saved it (else null). */
    customerId?: string | null;
    paymentMethodId?: string | null;
  } | null;
}

/** Asks Stripe for a Checkout Session with its PaymentIntent (one retrieve, expanded). */
export type CheckoutLookup = (checkoutSessionId: string) => Promise<CheckoutFacts>;

/** What the order says was bought: the terms Stripe's records must match before it is placed. */
export interface OrderTerms {
  orderId: string;
  /**
   * Before the payment is taken in, the lines at their prices (what checkout priced); once the
   * breakdown is recorded (`moneyRecorded`), what Stripe charged (the breakdown's total).
   */
  total: number;
  currency: string;
  moneyRecorded?: boolean;
  /** For the placement's one statement: the total to expect of an order whose breakdown is on record. */
  recordedTotal?: number;
}

/**
 * Builds CheckoutFacts from a session retrieved with `expand: ["payment_intent"]` (and
 * `breakdownExpansions` for the money breakdown; `lineItems` when they took more than one page).
 */
export function checkoutFactsOf(
  session: Stripe.Checkout.Session,
  lineItems?: readonly Stripe.LineItem[],
): CheckoutFacts {
  const intent = session.payment_intent;
  if (typeof intent === "string") {
    throw new Error(`Checkout Session ${session.id} was retrieved without expand: ["payment_intent"]`);
  }
  const money = breakdownOf(session, lineItems ?? session.line_items?.data);
  return {
    id: session.id,
    status: session.status,
    paymentStatus: session.payment_status,
    clientReferenceId: session.client_reference_id,
    metadataOrderId: session.metadata?.orderId ?? null,
    amountTotal: session.amount_total,
    // Only when Stripe gave them: a session without line items reads as it always did.
    ...(typeof session.amount_subtotal === "number" ? { amountSubtotal: session.amount_subtotal } : {}),
    currency: session.currency,
    ...(money ? { money } : {}),
    paymentIntent:
      intent === null
        ? null
        : {
            id: intent.id,
            status: intent.status,
            amount: intent.amount,
            currency: intent.currency,
            metadataOrderId: intent.metadata?.orderId ?? null,
            ...savedCardOf(intent),
          },
  };
}

/**
 * The Customer and card Checkout saved (customer_creation + setup_future_usage), when it did:
 * what a later off-session charge needs. Nothing for a PaymentIntent that saved no card.
 */
function savedCardOf(intent: Stripe.PaymentIntent): { customerId: string; paymentMethodId: string } | object {
  const customerId = idOf(intent.customer ?? null);
  const paymentMethodId = intent.setup_future_usage ? idOf(intent.payment_method ?? null) : null;
  return customerId && paymentMethodId ? { customerId, paymentMethodId } : {};
}

/**
 * Stripe's fulfilment guide: before fulfilling, check that what was paid is this order, in
 * full. Every problem found, in words ops can act on; none means the payment is the order's.
 * `claimedPaymentIntentId` is what the webhook payload named: a payload naming another
 * PaymentIntent than Stripe's session has is itself a problem (a forged or confused event).
 */
export function ownershipProblems(
  order: OrderTerms,
  facts: CheckoutFacts,
  claimedPaymentIntentId: string | null,
): string[] {
  const problems: string[] = [];
  const sameCurrency = (currency: string | null) => currency?.toLowerCase() === order.currency.toLowerCase();
  if (facts.status !== "complete") problems.push(`Stripe says the session is ${facts.status ?? "unknown"}`);
  if (facts.clientReferenceId !== order.orderId)
    problems.push(`session client_reference_id is ${facts.clientReferenceId ?? "unset"}`);
  if (facts.metadataOrderId !== order.orderId)
    problems.push(`session metadata.orderId is ${facts.metadataOrderId ?? "unset"}`);
  // With Stripe's breakdown, the order's own figure (the lines at their prices) is the session's
  // subtotal, and Stripe's figures must add up; the PaymentIntent then pays the session's total.
  // Without one (or once it is recorded, when the order's total is Stripe's), the totals match.
  const money = order.moneyRecorded ? null : (facts.money ?? null);
  const charged = money ? facts.amountTotal : order.total;
  if (money) {
    if (facts.amountSubtotal !== order.total)
      problems.push(
        `session lines' amount is ${facts.amountSubtotal ?? "unset"}, the order's total ${order.total} (amount_subtotal)`,
      );
    problems.push(...breakdownProblems(money));
  } else if (facts.amountTotal !== order.total) {
    problems.push(
      `session amount_total is ${facts.amountTotal ?? "unset"}, the order's total ${order.total}`,
    );
  }
  if (!sameCurrency(facts.currency))
    problems.push(`session currency is ${facts.currency ?? "unset"}, the order's ${order.currency}`);
  const intent = facts.paymentIntent;
  if (claimedPaymentIntentId !== null && claimedPaymentIntentId !== (intent?.id ?? null))
    problems.push(
      `the event names PaymentIntent ${claimedPaymentIntentId}, Stripe's session ${intent?.id ?? "none"}`,
    );
  if (intent) {
    if (intent.metadataOrderId !== order.orderId)
      problems.push(`PaymentIntent metadata.orderId is ${intent.metadataOrderId ?? "unset"}`);
    if (intent.amount !== charged)
      problems.push(`PaymentIntent amount is ${intent.amount}, the order's total ${charged ?? "unset"}`);
    if (!sameCurrency(intent.currency))
      problems.push(`PaymentIntent currency is ${intent.currency}, the order's ${order.currency}`);
  }
  return problems;
}

/**
 * The `from` sets make every ordering converge: a status only ever moves forward, so a late
 * `checkout.session.completed` after `async_payment_succeeded` (or a duplicate of anything)
 * finds the order past its `from` and changes nothing.
 */
const beforePayment: readonly OrderStatus[] = ["pending", "payment_processing"];

/** An order's `shipping_address` column (read back by src/shipping/shipping-destinations.ts). */
export type StoredShippingAddress = ShippingAddress;

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

/**
 * For the two events that can place an order: Stripe's current record of the session decides
 * (never the payload), after the ownership and amount checks.
 */
async function planPayment(
  event: Stripe.CheckoutSessionCompletedEvent | Stripe.CheckoutSessionAsyncPaymentSucceededEvent,
  lookup: CheckoutLookup,
  order: OrderTerms,
): Promise<IntakePlan> {
  const session = event.data.object;
  if (session.mode !== "payment") return { kind: "ignore", reason: `mode ${session.mode}` };
  const facts = await lookup(session.id);
  const problems = ownershipProblems(order, facts, idOf(session.payment_intent));
  if (problems.length > 0) {
    return {
      kind: "mismatch",
      checkoutSessionId: session.id,
      reason: `Payment does not match the order (${event.type}): ${problems.join("; ")}`,
      problems,
    };
  }
  const paymentIntentId = facts.paymentIntent?.id ?? null;
  const transition = (
    to: OrderStatus,
    from: readonly OrderStatus[],
    timelineKind: TimelineKind,
  ): IntakePlan => ({
    kind: "transition",
    checkoutSessionId: session.id,
    from,
    to,
    paymentIntentId,
    timelineKind,
    shippingAddress: shippingAddressOf(session),
    ...(facts.money && !order.moneyRecorded && to !== "payment_failed" ? { money: facts.money } : {}),
    ...(facts.paymentIntent?.customerId && facts.paymentIntent.paymentMethodId
      ? {
          savedCard: {
            customerId: facts.paymentIntent.customerId,
            paymentMethodId: facts.paymentIntent.paymentMethodId,
          },
        }
      : {}),
  });
  if (facts.paymentIntent === null) {
    return facts.paymentStatus === "no_payment_required"
      ? transition("paid", beforePayment, "payment-not-required")
      : { kind: "ignore", reason: "completed session without a PaymentIntent" };
  }
  // The payload's payment_status cannot tell a manual-capture authorization from a delayed
  // payment method (both "unpaid"), and is a snapshot: Stripe's current answer decides.
  const status = facts.paymentIntent.status;
  switch (status) {
    case "succeeded":
      return transition("paid", beforePayment, "payment-received");
    case "requires_capture":
      return transition("authorized", ["pending"], "payment-authorized");
    case "processing":
      return event.type === "checkout.session.completed"
        ? transition("payment_processing", ["pending"], "payment-processing")
        : { kind: "ignore", reason: `PaymentIntent ${paymentIntentId} is still processing at Stripe` };
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

/**
 * The order a payment event says it pays for, from the payload alone: the Checkout Session's
 * `client_reference_id`, which src/payments/stripe-checkout.ts sets to the order id. A claim, not
 * a fact: the intake checks it against Stripe's record and against the order itself before it
 * writes anything. Null for every other event, and for sessions that name no order of this kind.
 */
export function claimedPayment(event: Stripe.Event): { checkoutSessionId: string; orderId: string } | null {
  if (
    event.type !== "checkout.session.completed" &&
    event.type !== "checkout.session.async_payment_succeeded"
  )
    return null;
  const session = event.data.object;
  const orderId = session.client_reference_id;
  if (session.mode !== "payment" || typeof orderId !== "string" || !uuidPattern.test(orderId)) return null;
  return { checkoutSessionId: session.id, orderId: orderId.toLowerCase() };
}

/**
 * Decides what an event means for the order it names. The events that can place an order
 * (completed, async_payment_succeeded) ask Stripe for the session and check it against `order`.
 */
export async function planFor(
  event: Stripe.Event,
  lookup: CheckoutLookup,
  order: OrderTerms,
): Promise<IntakePlan> {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
      return planPayment(event, lookup, order);
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
      if (intent.metadata?.orderId !== order.orderId)
        return { kind: "ignore", reason: "the PaymentIntent's orderId is not this order's" };
      return {
        kind: "declined",
        orderId: order.orderId,
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
