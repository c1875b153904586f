import type Stripe from "stripe";
import type { Origin, Outcome, SandboxContext } from "./context";
import { unixSeconds } from "./context";
import type { DeclineCode } from "./errors";
import { stripeErrors, type StripeApiError } from "./errors";
import { recordEvent } from "./events";
import { fromFixture } from "./fixtures";
import type { Params } from "./form";
import { optionalInteger, optionalList, optionalString, stringMap } from "./form";
import { stripeId } from "./ids";
import { bookCharge } from "./ledger";

const cancellableStatuses: Stripe.PaymentIntent.Status[] = [
  "requires_payment_method",
  "requires_capture",
  "requires_confirmation",
  "requires_action",
  "processing",
];

export function retrievePaymentIntent(ctx: SandboxContext, id: string): Stripe.PaymentIntent {
  const paymentIntent = ctx.store.data.paymentIntents[id];
  if (!paymentIntent) throw stripeErrors.resourceMissing("payment_intent", id);
  return paymentIntent;
}

/** Applies `expand[]=latest_charge`, the one PaymentIntent expansion this service uses. */
export function renderPaymentIntent(
  ctx: SandboxContext,
  paymentIntent: Stripe.PaymentIntent,
  params: Params,
): unknown {
  const expand = optionalList(params, "expand") ?? [];
  const rendered: Record<string, unknown> = { ...paymentIntent };
  for (const field of expand) {
    if (field === "latest_charge") rendered.latest_charge = chargeOf(ctx, paymentIntent) ?? null;
    else
      throw stripeErrors.invalidParam(
        "expand",
        `This property cannot be expanded (${String(field)}) in the Stripe sandbox.`,
      );
  }
  return rendered;
}

export function newPaymentIntent(
  ctx: SandboxContext,
  fields: {
    amount: number;
    currency: string;
    captureMethod: Stripe.PaymentIntent.CaptureMethod;
    metadata: Record<string, string>;
    description: string | null;
    receiptEmail: string | null;
  },
): Stripe.PaymentIntent {
  const id = stripeId("pi");
  const paymentIntent: Stripe.PaymentIntent = {
    ...fromFixture("payment_intent"),
    id,
    amount: fields.amount,
    amount_capturable: 0,
    amount_received: 0,
    automatic_payment_methods: null,
    canceled_at: null,
    cancellation_reason: null,
    capture_method: fields.captureMethod,
    client_secret: `${id}_secret_${stripeId("req").slice(6)}`,
    created: unixSeconds(ctx.now()),
    currency: fields.currency,
    description: fields.description,
    last_payment_error: null,
    latest_charge: null,
    metadata: fields.metadata,
    next_action: null,
    payment_method: stripeId("pm"),
    payment_method_configuration_details: null,
    processing: null,
    receipt_email: fields.receiptEmail,
    shipping: null,
    status: "requires_payment_method",
    transfer_data: null,
  };
  ctx.store.data.paymentIntents[id] = paymentIntent;
  return paymentIntent;
}

export function newCharge(
  ctx: SandboxContext,
  paymentIntent: Stripe.PaymentIntent,
  email: string | null,
): Stripe.Charge {
  const id = stripeId("ch");
  const fixture = fromFixture("charge");
  const charge: Stripe.Charge = {
    ...fixture,
    id,
    amount: paymentIntent.amount,
    amount_captured: 0,
    amount_refunded: 0,
    balance_transaction: null,
    billing_details: { ...fixture.billing_details, email },
    captured: false,
    created: unixSeconds(ctx.now()),
    currency: paymentIntent.currency,
    description: paymentIntent.description,
    metadata: paymentIntent.metadata,
    outcome: {
      ...fixture.outcome,
      network_status: "approved_by_network",
      reason: null,
      risk_level: "normal",
      seller_message: "Payment complete.",
      type: "authorized",
    } as Stripe.Charge.Outcome,
    paid: true,
    payment_intent: paymentIntent.id,
    payment_method: paymentIntent.payment_method as string,
    receipt_email: paymentIntent.receipt_email,
    receipt_url: null,
    refunded: false,
    refunds: { object: "list", data: [], has_more: false, url: `/v1/charges/${id}/refunds` },
    source: null,
    status: "succeeded",
    transfer_data: null,
  };
  ctx.store.data.charges[id] = charge;
  paymentIntent.latest_charge = id;
  return charge;
}

export function chargeOf(
  ctx: SandboxContext,
  paymentIntent: Stripe.PaymentIntent,
): Stripe.Charge | undefined {
  const id = paymentIntent.latest_charge;
  return typeof id === "string" ? ctx.store.data.charges[id] : undefined;
}

/** A card payment that the issuer declines: the PaymentIntent stays open for another attempt. */
export function declinePayment(
  ctx: SandboxContext,
  paymentIntent: Stripe.PaymentIntent,
  code: DeclineCode,
  email: string | null,
): Stripe.Event[] {
  const charge = newCharge(ctx, paymentIntent, email);
  const error = stripeErrors.declined(code).body;
  Object.assign(charge, {
    paid: false,
    status: "failed",
    failure_code: error.code,
    failure_message: error.message,
    outcome: {
      ...charge.outcome,
      type: "issuer_declined",
      network_status: "declined_by_network",
      reason: error.decline_code,
      seller_message: "The bank did not return any further details with this decline.",
    },
  });
  paymentIntent.status = "requires_payment_method";
  paymentIntent.last_payment_error = {
    type: "card_error",
    code: error.code,
    decline_code: error.decline_code,
    message: error.message,
    charge: charge.id,
  } as Stripe.PaymentIntent.LastPaymentError;
  return [
    recordEvent(ctx, "charge.failed", charge, { requestId: null, idempotencyKey: null }),
    recordEvent(ctx, "payment_intent.payment_failed", paymentIntent, {
      requestId: null,
      idempotencyKey: null,
    }),
  ];
}

function unexpectedState(
  paymentIntent: Stripe.PaymentIntent,
  action: "captured" | "canceled",
  allowed: string[],
): StripeApiError {
  // Stripe's own wording for each (as its API answers them).
  const opening =
    action === "captured"
      ? "This PaymentIntent could not be captured"
      : "You cannot cancel this PaymentIntent";
  return stripeErrors.unexpectedState(
    paymentIntent,
    `${opening} because it has a status of ${paymentIntent.status}. ` +
      `Only a PaymentIntent with one of the following statuses may be ${action}: ${allowed.join(", ")}.`,
  );
}

/** The Checkout Session that created this PaymentIntent, if one did. */
function checkoutSessionOf(
  ctx: SandboxContext,
  paymentIntentId: string,
): Stripe.Checkout.Session | undefined {
  return Object.values(ctx.store.data.checkoutSessions).find(
    (session) => session.payment_intent === paymentIntentId,
  );
}

/**
 * When the authorization behind an uncaptured card charge lapses: Stripe publishes it as
 * `payment_method_details.card.capture_before` (Unix seconds) on the charge.
 */
export function captureBeforeOf(charge: Stripe.Charge | undefined): number | undefined {
  return charge?.payment_method_details?.card?.capture_before ?? undefined;
}

/** Marks a card charge authorized for later capture, with its lapse `authorizationWindowMs` from now. */
export function authorizeCharge(
  ctx: SandboxContext,
  paymentIntent: Stripe.PaymentIntent,
  charge: Stripe.Charge,
): void {
  paymentIntent.status = "requires_capture";
  paymentIntent.amount_capturable = paymentIntent.amount;
  const details = charge.payment_method_details;
  if (details?.card) {
    charge.payment_method_details = {
      ...details,
      card: { ...details.card, capture_before: unixSeconds(ctx.now() + ctx.authorizationWindowMs) },
    };
  }
}

function authorizationLapsed(ctx: SandboxContext, paymentIntent: Stripe.PaymentIntent): boolean {
  const captureBefore = captureBeforeOf(chargeOf(ctx, paymentIntent));
  return captureBefore !== undefined && ctx.now() >= captureBefore * 1000;
}

export function capturePaymentIntent(
  ctx: SandboxContext,
  id: string,
  params: Params,
  origin: Origin,
): Outcome<Stripe.PaymentIntent> {
  const paymentIntent = retrievePaymentIntent(ctx, id);
  // Stripe already expired the uncaptured charge (see expireAuthorization).
  if (paymentIntent.status === "canceled" && paymentIntent.cancellation_reason === "expired")
    throw stripeErrors.captureFailed("charge_expired_for_capture", paymentIntent);
  if (paymentIntent.status !== "requires_capture")
    throw unexpectedState(paymentIntent, "captured", ["requires_capture"]);
  // The window has passed but Stripe's expiry has not run yet: the network refuses the capture.
  if (authorizationLapsed(ctx, paymentIntent))
    throw stripeErrors.captureFailed("capture_charge_authorization_expired", paymentIntent);
  const amount = optionalInteger(params, "amount_to_capture") ?? paymentIntent.amount_capturable;
  if (amount <= 0 || amount > paymentIntent.amount_capturable) {
    throw stripeErrors.invalidParam(
      "amount_to_capture",
      `The amount to capture (${amount}) must be positive and at most the amount capturable (${paymentIntent.amount_capturable}).`,
      "amount_too_large",
    );
  }
  const charge = chargeOf(ctx, paymentIntent);
  paymentIntent.status = "succeeded";
  paymentIntent.amount_received = amount;
  paymentIntent.amount_capturable = 0;
  const events: Stripe.Event[] = [];
  if (charge) {
    charge.captured = true;
    charge.amount_captured = amount;
    // Capturing less than authorised releases the rest: Stripe counts it in amount_refunded (the
    // charge is not `refunded`, which means refunded in full); no money moved, so nothing is booked.
    charge.amount_refunded = charge.amount - amount;
    charge.refunded = false;
    bookCharge(ctx, charge);
    events.push(recordEvent(ctx, "charge.captured", charge, origin));
  }
  events.push(recordEvent(ctx, "payment_intent.succeeded", paymentIntent, origin));
  return { result: paymentIntent, events };
}

function releaseAuthorization(
  ctx: SandboxContext,
  paymentIntent: Stripe.PaymentIntent,
): Stripe.Charge | undefined {
  const charge = chargeOf(ctx, paymentIntent);
  if (charge && charge.status === "succeeded" && !charge.captured) {
    charge.amount_refunded = charge.amount;
    charge.refunded = true;
  }
  return charge;
}

export function cancelPaymentIntent(
  ctx: SandboxContext,
  id: string,
  params: Params,
  origin: Origin,
): Outcome<Stripe.PaymentIntent> {
  const paymentIntent = retrievePaymentIntent(ctx, id);
  if (!cancellableStatuses.includes(paymentIntent.status)) {
    throw unexpectedState(paymentIntent, "canceled", cancellableStatuses);
  }
  // Stripe: "You can directly cancel the PaymentIntent for a Checkout Session only when the
  // PaymentIntent has a status of requires_capture. Otherwise, you must expire the Checkout Session."
  const session = checkoutSessionOf(ctx, id);
  if (session && paymentIntent.status !== "requires_capture") {
    throw stripeErrors.unexpectedState(
      paymentIntent,
      `You cannot cancel this PaymentIntent because it has a status of ${paymentIntent.status} and was created by Checkout Session ${session.id}. ` +
        `A Checkout Session's PaymentIntent can be canceled only when its status is requires_capture; expire the Checkout Session instead (POST /v1/checkout/sessions/${session.id}/expire).`,
    );
  }
  const reason = optionalString(params, "cancellation_reason") ?? null;
  const reasons = ["duplicate", "fraudulent", "requested_by_customer", "abandoned"];
  if (reason !== null && !reasons.includes(reason)) {
    throw stripeErrors.invalidParam(
      "cancellation_reason",
      `Invalid cancellation_reason: must be one of ${reasons.join(", ")}`,
    );
  }
  const wasAuthorized = paymentIntent.status === "requires_capture";
  const charge = releaseAuthorization(ctx, paymentIntent);
  paymentIntent.status = "canceled";
  paymentIntent.cancellation_reason = reason as Stripe.PaymentIntent.CancellationReason | null;
  paymentIntent.canceled_at = unixSeconds(ctx.now());
  paymentIntent.amount_capturable = 0;
  const events: Stripe.Event[] = [];
  if (wasAuthorized && charge) events.push(recordEvent(ctx, "charge.refunded", charge, origin));
  events.push(recordEvent(ctx, "payment_intent.canceled", paymentIntent, origin));
  return { result: paymentIntent, events };
}

/**
 * An authorization that was never captured lapses (about seven days for cards): Stripe cancels the
 * PaymentIntent with `cancellation_reason: "expired"` (API versions before 2024-06 said
 * `automatic`), releases the hold (the charge reads refunded) and sends `charge.expired` and
 * `payment_intent.canceled`.
 */
export function expireAuthorization(
  ctx: SandboxContext,
  id: string,
  origin: Origin,
): Outcome<Stripe.PaymentIntent> {
  const paymentIntent = retrievePaymentIntent(ctx, id);
  if (paymentIntent.status !== "requires_capture") {
    throw stripeErrors.invalidRequest(
      "payment_intent_unexpected_state",
      `Only an authorized PaymentIntent (requires_capture) can expire; ${id} has a status of ${paymentIntent.status}.`,
    );
  }
  const charge = releaseAuthorization(ctx, paymentIntent);
  paymentIntent.status = "canceled";
  paymentIntent.cancellation_reason = "expired";
  paymentIntent.canceled_at = unixSeconds(ctx.now());
  paymentIntent.amount_capturable = 0;
  const events: Stripe.Event[] = [];
  if (charge) events.push(recordEvent(ctx, "charge.expired", charge, origin));
  events.push(recordEvent(ctx, "payment_intent.canceled", paymentIntent, origin));
  return { result: paymentIntent, events };
}

/**
 * Stripe's expiry run: every authorization whose `capture_before` has passed on the sandbox clock
 * lapses as above. Until it runs, a capture of such a PaymentIntent fails with
 * `capture_charge_authorization_expired`; after, with `charge_expired_for_capture`.
 */
export function expireLapsedAuthorizations(
  ctx: SandboxContext,
  origin: Origin,
): Outcome<Stripe.PaymentIntent[]> {
  const lapsed = Object.values(ctx.store.data.paymentIntents).filter(
    (paymentIntent) => paymentIntent.status === "requires_capture" && authorizationLapsed(ctx, paymentIntent),
  );
  const events = lapsed.flatMap((paymentIntent) => expireAuthorization(ctx, paymentIntent.id, origin).events);
  return { result: lapsed, events };
}

/** The parameters of POST /v1/payment_intents the sandbox models: an off-session charge of a saved card. */
const createParams = new Set([
  "amount",
  "currency",
  "customer",
  "payment_method",
  "off_session",
  "confirm",
  "metadata",
  "description",
  "receipt_email",
  "expand",
]);

/** The outcome of a create whose payment failed: the PaymentIntent exists, the answer is Stripe's 402. */
export interface FailedCreate extends Outcome<Stripe.PaymentIntent> {
  error: StripeApiError;
}

/**
 * POST /v1/payment_intents as a merchant charges a card saved at checkout while the customer is
 * away: `customer`, `payment_method` (attached to that customer), `off_session: true`,
 * `confirm: true`. Stripe confirms at once: the charge succeeds (automatic capture, booked on the
 * balance, `payment_intent.succeeded`), or the issuer refuses it (`decline`, an injected failure:
 * `authentication_required` when the bank wants the customer present, `card_declined`, ...). A
 * refusal still creates the PaymentIntent: Stripe answers 402 `card_error` with it attached,
 * `requires_payment_method`, its failed charge in `last_payment_error`, and sends
 * `payment_intent.payment_failed`. Other creates (on-session, unconfirmed) are not modelled.
 */
export function createPaymentIntent(
  ctx: SandboxContext,
  params: Params,
  origin: Origin,
  decline?: DeclineCode,
): Outcome<Stripe.PaymentIntent> | FailedCreate {
  for (const key of Object.keys(params)) {
    if (!createParams.has(key)) {
      throw stripeErrors.invalidParam(
        key,
        `The Stripe sandbox does not implement the parameter ${key} on POST /v1/payment_intents (Stripe accepts it).`,
        "parameter_not_implemented",
      );
    }
  }
  const amount = optionalInteger(params, "amount");
  if (amount === undefined) throw stripeErrors.missingParam("amount");
  // Stripe's minimum charge is about 50 cents in most currencies; the sandbox asks for one unit.
  if (amount < 1) {
    throw stripeErrors.invalidParam(
      "amount",
      "This value must be greater than or equal to 1.",
      "parameter_invalid_integer",
    );
  }
  const currency = optionalString(params, "currency")?.toLowerCase();
  if (!currency) throw stripeErrors.missingParam("currency");
  if (optionalString(params, "confirm") !== "true" || optionalString(params, "off_session") !== "true") {
    throw stripeErrors.invalidParam(
      "off_session",
      "The Stripe sandbox implements POST /v1/payment_intents for off-session charges only: confirm=true and off_session=true.",
      "parameter_not_implemented",
    );
  }
  const customerId = optionalString(params, "customer");
  const paymentMethod = optionalString(params, "payment_method");
  if (!paymentMethod) throw stripeErrors.missingParam("payment_method");
  if (!customerId) {
    // Stripe: a saved card is charged with its Customer; without one it cannot be reused.
    throw stripeErrors.invalidRequest(
      "payment_method_unexpected_state",
      `The provided PaymentMethod ${paymentMethod} was previously used without a Customer attachment; it may not be used again.`,
      "payment_method",
    );
  }
  const customer = ctx.store.data.customers[customerId];
  if (!customer) throw stripeErrors.resourceMissing("customer", customerId, "customer");
  if (!customer.paymentMethods.includes(paymentMethod)) {
    throw stripeErrors.invalidRequest(
      "resource_missing",
      `The PaymentMethod ${paymentMethod} does not belong to the Customer ${customerId}. Please attach it to the Customer first.`,
      "payment_method",
    );
  }
  const paymentIntent = newPaymentIntent(ctx, {
    amount,
    currency,
    captureMethod: "automatic",
    metadata: stringMap(params, "metadata"),
    description: optionalString(params, "description") ?? null,
    receiptEmail: optionalString(params, "receipt_email") ?? null,
  });
  paymentIntent.customer = customerId;
  paymentIntent.payment_method = paymentMethod;
  const events: Stripe.Event[] = [recordEvent(ctx, "payment_intent.created", paymentIntent, origin)];
  if (decline) {
    events.push(...declinePayment(ctx, paymentIntent, decline, customer.email));
    if (paymentIntent.last_payment_error)
      Object.assign(paymentIntent.last_payment_error, { payment_method: { id: paymentMethod } });
    return { result: paymentIntent, events, error: stripeErrors.declined(decline, paymentIntent) };
  }
  const charge = newCharge(ctx, paymentIntent, customer.email);
  charge.captured = true;
  charge.amount_captured = charge.amount;
  bookCharge(ctx, charge);
  paymentIntent.status = "succeeded";
  paymentIntent.amount_received = amount;
  events.push(recordEvent(ctx, "charge.succeeded", charge, origin));
  events.push(recordEvent(ctx, "payment_intent.succeeded", paymentIntent, origin));
  return { result: paymentIntent, events };
}
