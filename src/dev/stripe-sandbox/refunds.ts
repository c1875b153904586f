import type Stripe from "stripe";
import type { Origin, Outcome, SandboxContext } from "./context";
import { unixSeconds } from "./context";
import { stripeErrors } from "./errors";
import { recordEvent } from "./events";
import { fromFixture } from "./fixtures";
import type { Params } from "./form";
import { optionalInteger, optionalString, stringMap } from "./form";
import { stripeId } from "./ids";
import { bookRefund } from "./ledger";
import { chargeOf, retrievePaymentIntent } from "./payment-intents";

const reasons = ["duplicate", "fraudulent", "requested_by_customer"];

const formatAmount = (amount: number, currency: string): string =>
  `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;

function chargeToRefund(ctx: SandboxContext, params: Params): Stripe.Charge {
  const paymentIntentId = optionalString(params, "payment_intent");
  const chargeId = optionalString(params, "charge");
  if (paymentIntentId === undefined && chargeId === undefined) {
    throw stripeErrors.invalidRequest(
      "parameter_missing",
      "One of the following params should be provided for this request: payment_intent or charge.",
    );
  }
  if (chargeId !== undefined) {
    const charge = ctx.store.data.charges[chargeId];
    if (!charge) throw stripeErrors.resourceMissing("charge", chargeId, "charge");
    return charge;
  }
  const paymentIntent = retrievePaymentIntent(ctx, paymentIntentId as string);
  if (paymentIntent.status !== "succeeded") {
    throw stripeErrors.unexpectedState(
      paymentIntent,
      `This PaymentIntent (${paymentIntent.id}) does not have a successful charge to refund; it has a status of ${paymentIntent.status}.` +
        (paymentIntent.status === "requires_capture"
          ? " Cancel it to release an uncaptured authorization."
          : ""),
    );
  }
  const charge = chargeOf(ctx, paymentIntent);
  if (!charge)
    throw stripeErrors.resourceMissing("charge", String(paymentIntent.latest_charge), "payment_intent");
  return charge;
}

/**
 * Stripe's dispute statuses after which the charge can be refunded again: the cardholder's bank
 * decided for the shop, or Stripe closed it with the charge refunded. Any other status of a
 * chargeback (`needs_response`, `under_review`, `lost`) leaves the money with the network.
 */
const refundableAgain: readonly string[] = ["won", "warning_closed", "prevented", "charge_refunded"];

/**
 * A charged-back charge cannot be refunded: Stripe answers 400 `charge_disputed` ("has been
 * charged back; cannot issue a refund") unless the dispute says `is_charge_refundable` (an
 * inquiry, which a refund heads off) or it is over for the shop.
 */
function refuseIfDisputed(ctx: SandboxContext, charge: Stripe.Charge): void {
  if (!charge.disputed) return;
  const blocking = Object.values(ctx.store.data.disputes).find(
    (dispute) =>
      dispute.charge === charge.id &&
      !dispute.is_charge_refundable &&
      !refundableAgain.includes(dispute.status),
  );
  if (blocking) {
    throw stripeErrors.invalidRequest(
      "charge_disputed",
      `Charge ${charge.id} has been charged back; cannot issue a refund.`,
    );
  }
}

export function createRefund(ctx: SandboxContext, params: Params, origin: Origin): Outcome<Stripe.Refund> {
  const charge = chargeToRefund(ctx, params);
  refuseIfDisputed(ctx, charge);
  // Stripe counts a partial capture's released remainder in `amount_refunded` (the charge reads
  // amount 7500, amount_captured 5000, amount_refunded 2500): what can still be refunded is the
  // charge's amount less all of that, i.e. the captured money not yet given back.
  const refundable = charge.captured ? charge.amount - charge.amount_refunded : 0;
  if (refundable <= 0) {
    throw stripeErrors.invalidRequest(
      "charge_already_refunded",
      `Charge ${charge.id} has already been refunded.`,
    );
  }
  const amount = optionalInteger(params, "amount") ?? refundable;
  if (amount <= 0)
    throw stripeErrors.invalidParam("amount", "Refund amount must be positive.", "parameter_invalid_integer");
  if (amount > refundable) {
    throw stripeErrors.invalidRequest(
      "amount_too_large",
      `Refund amount (${formatAmount(amount, charge.currency)}) is greater than unrefunded amount on charge (${formatAmount(refundable, charge.currency)})`,
      "amount",
    );
  }
  const reason = optionalString(params, "reason") ?? null;
  if (reason !== null && !reasons.includes(reason)) {
    throw stripeErrors.invalidParam("reason", `Invalid reason: must be one of ${reasons.join(", ")}`);
  }
  const refund: Stripe.Refund = {
    ...fromFixture("refund"),
    id: stripeId("re"),
    amount,
    charge: charge.id,
    created: unixSeconds(ctx.now()),
    currency: charge.currency,
    metadata: stringMap(params, "metadata"),
    payment_intent: charge.payment_intent,
    reason: reason as Stripe.Refund.Reason | null,
    status: "succeeded",
  };
  ctx.store.data.refunds[refund.id] = refund;
  bookRefund(ctx, refund);
  charge.amount_refunded += amount;
  charge.refunded = charge.amount_refunded >= charge.amount;
  charge.refunds?.data.unshift(refund);
  return {
    result: refund,
    events: [
      recordEvent(ctx, "refund.created", refund, origin),
      recordEvent(ctx, "charge.refunded", charge, origin),
    ],
  };
}

export function retrieveRefund(ctx: SandboxContext, id: string): Stripe.Refund {
  const refund = ctx.store.data.refunds[id];
  if (!refund) throw stripeErrors.resourceMissing("refund", id);
  return refund;
}
