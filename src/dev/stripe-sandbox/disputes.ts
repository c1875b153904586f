import type Stripe from "stripe";
import type { Origin, Outcome, SandboxContext } from "./context";
import { unixSeconds } from "./context";
import { stripeErrors } from "./errors";
import { recordEvent } from "./events";
import { fromFixture } from "./fixtures";
import { stripeId } from "./ids";
import { book, chargeFee, disputeFee } from "./ledger";
import { chargeOf, retrievePaymentIntent } from "./payment-intents";

/**
 * What a dispute does, like Stripe's test cards do it: the disputed amount and the dispute fee are
 * withdrawn at once (`charge.dispute.created`, `charge.dispute.funds_withdrawn`).
 */
export function openDispute(
  ctx: SandboxContext,
  paymentIntentId: string,
  fields: { reason?: string; amount?: number },
  origin: Origin,
): Outcome<Stripe.Dispute> {
  const paymentIntent = retrievePaymentIntent(ctx, paymentIntentId);
  const charge = chargeOf(ctx, paymentIntent);
  if (!charge?.captured) {
    throw stripeErrors.invalidRequest(
      "charge_not_captured",
      `PaymentIntent ${paymentIntentId} has no captured charge to dispute.`,
    );
  }
  const created = unixSeconds(ctx.now());
  const dispute: Stripe.Dispute = {
    ...fromFixture("dispute"),
    id: stripeId("dp"),
    amount: fields.amount ?? charge.amount_captured,
    charge: charge.id,
    created,
    currency: charge.currency,
    // Stripe gives about three weeks to answer.
    // A chargeback, not an inquiry: the charge cannot be refunded while it is open (refunds.ts).
    is_charge_refundable: false,
    evidence_details: {
      ...fromFixture("dispute").evidence_details,
      due_by: created + 21 * 86_400,
      has_evidence: false,
      past_due: false,
      submission_count: 0,
    },
    payment_intent: paymentIntent.id,
    reason: fields.reason ?? "fraudulent",
    status: "needs_response",
  };
  const withdrawal = book(ctx, {
    type: "adjustment",
    reportingCategory: "dispute",
    source: dispute,
    amount: -dispute.amount,
    fee: disputeFee,
    currency: dispute.currency,
    description: `Chargeback withdrawal for ${charge.id}`,
  });
  dispute.balance_transactions = [withdrawal];
  ctx.store.data.disputes[dispute.id] = dispute;
  charge.disputed = true;
  return {
    result: dispute,
    events: [
      recordEvent(ctx, "charge.dispute.created", dispute, origin),
      recordEvent(ctx, "charge.dispute.funds_withdrawn", dispute, origin),
    ],
  };
}

/**
 * A test fixture, not a Stripe operation: Stripe's record of a capture now differs from the order
 * (what a capture made in the Dashboard, or one our capture step never heard back from, leaves).
 * The charge and its balance transaction read `amount` from now on.
 */
export function amendCapture(ctx: SandboxContext, paymentIntentId: string, amount: number): Stripe.Charge {
  const charge = chargeOf(ctx, retrievePaymentIntent(ctx, paymentIntentId));
  if (!charge?.captured || typeof charge.balance_transaction !== "string") {
    throw stripeErrors.invalidRequest(
      "charge_not_captured",
      `PaymentIntent ${paymentIntentId} has no captured charge.`,
    );
  }
  charge.amount_captured = amount;
  const transaction = ctx.store.data.balanceTransactions[charge.balance_transaction];
  if (transaction) {
    transaction.amount = amount;
    transaction.fee = chargeFee(amount);
    transaction.net = amount - transaction.fee;
    if (transaction.fee_details[0]) transaction.fee_details[0].amount = transaction.fee;
  }
  return charge;
}

/** Radar opens a manual review of a payment (what Stripe's review test cards do). */
export function openReview(
  ctx: SandboxContext,
  paymentIntentId: string,
  origin: Origin,
): Outcome<Stripe.Review> {
  const paymentIntent = retrievePaymentIntent(ctx, paymentIntentId);
  const charge = chargeOf(ctx, paymentIntent);
  const review: Stripe.Review = {
    ...fromFixture("review"),
    id: stripeId("prv"),
    charge: charge?.id ?? null,
    created: unixSeconds(ctx.now()),
    open: true,
    opened_reason: "rule",
    payment_intent: paymentIntent.id,
    reason: "rule",
    closed_reason: null,
  } as Stripe.Review;
  ctx.store.data.reviews[review.id] = review;
  paymentIntent.review = review.id;
  return { result: review, events: [recordEvent(ctx, "review.opened", review, origin)] };
}

/** Someone closes the review in the Dashboard: approved, or refunded (as fraud or not). */
export function closeReview(
  ctx: SandboxContext,
  reviewId: string,
  closedReason: Stripe.Review.ClosedReason,
  origin: Origin,
): Outcome<Stripe.Review> {
  const review = ctx.store.data.reviews[reviewId];
  if (!review) throw stripeErrors.resourceMissing("review", reviewId);
  if (!review.open)
    throw stripeErrors.invalidRequest("review_closed", `Review ${reviewId} is already closed.`);
  Object.assign(review, { open: false, closed_reason: closedReason, reason: closedReason });
  return { result: review, events: [recordEvent(ctx, "review.closed", review, origin)] };
}

/**
 * The card network decides (what Stripe's evidence test values lead to): won, the disputed amount
 * comes back (`charge.dispute.funds_reinstated`, a `dispute_reversal` balance transaction; the
 * stand-in keeps the dispute fee withdrawn, whether Stripe returns it depends on the account's
 * country); lost, the money stays withdrawn.
 * Either way the dispute closes (`charge.dispute.closed`).
 */
export function closeDispute(
  ctx: SandboxContext,
  disputeId: string,
  outcome: "won" | "lost",
  origin: Origin,
): Outcome<Stripe.Dispute> {
  const dispute = ctx.store.data.disputes[disputeId];
  if (!dispute) throw stripeErrors.resourceMissing("dispute", disputeId);
  if (dispute.status === "won" || dispute.status === "lost") {
    throw stripeErrors.invalidRequest("dispute_closed", `Dispute ${disputeId} is already closed.`);
  }
  dispute.status = outcome;
  dispute.evidence_details = { ...dispute.evidence_details, has_evidence: true, submission_count: 1 };
  const events: Stripe.Event[] = [];
  if (outcome === "won") {
    const reinstatement = book(ctx, {
      type: "adjustment",
      reportingCategory: "dispute_reversal",
      source: dispute,
      amount: dispute.amount,
      fee: 0,
      currency: dispute.currency,
      description: `Chargeback reversal for ${String(dispute.charge)}`,
    });
    dispute.balance_transactions = [...dispute.balance_transactions, reinstatement];
    events.push(recordEvent(ctx, "charge.dispute.funds_reinstated", dispute, origin));
  }
  events.push(recordEvent(ctx, "charge.dispute.closed", dispute, origin));
  return { result: dispute, events };
}

/** GET /v1/disputes/:id: Stripe's 404 `resource_missing` for a dispute it never opened. */
export function retrieveDispute(ctx: SandboxContext, disputeId: string): Stripe.Dispute {
  const dispute = ctx.store.data.disputes[disputeId];
  if (!dispute) throw stripeErrors.resourceMissing("dispute", disputeId);
  return dispute;
}
