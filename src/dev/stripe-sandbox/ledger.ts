import type Stripe from "stripe";
import type { SandboxContext } from "./context";
import { unixSeconds } from "./context";
import { listOf } from "./events";
import { fromFixture } from "./fixtures";
import type { Params } from "./form";
import { optionalList, optionalString } from "./form";
import { stripeId } from "./ids";

/**
 * The account's balance as Stripe keeps it: one balance transaction per movement of money (a
 * captured charge, a refund, a dispute's withdrawal and reinstatement), each pointing at its
 * source, plus the list endpoints that page through them, refunds and disputes.
 *
 * Fees follow Stripe's standard US card pricing (2.9% + 30¢ on a charge, nothing back on a
 * refund, 15.00 per dispute), which is what a test-mode account shows.
 */

export const disputeFee = 1500;

export function chargeFee(amount: number): number {
  return Math.round(amount * 0.029) + 30;
}

export type Source = Stripe.Charge | Stripe.Refund | Stripe.Dispute;

export function book(
  ctx: SandboxContext,
  fields: {
    type: Stripe.BalanceTransaction.Type;
    reportingCategory: string;
    source: Source;
    amount: number;
    fee: number;
    currency: string;
    description: string | null;
  },
): Stripe.BalanceTransaction {
  const created = unixSeconds(ctx.now());
  const transaction: Stripe.BalanceTransaction = {
    ...fromFixture("balance_transaction"),
    id: stripeId("txn"),
    amount: fields.amount,
    // Stripe makes card funds available two days later (test mode: the same schedule).
    available_on: created + 2 * 86_400,
    created,
    currency: fields.currency,
    description: fields.description,
    fee: fields.fee,
    fee_details:
      fields.fee === 0
        ? []
        : [
            {
              amount: fields.fee,
              application: null,
              currency: fields.currency,
              description: "Stripe processing fees",
              type: "stripe_fee",
            },
          ],
    net: fields.amount - fields.fee,
    reporting_category: fields.reportingCategory,
    source: fields.source.id,
    status: "pending",
    type: fields.type,
  };
  ctx.store.data.balanceTransactions[transaction.id] = transaction;
  return transaction;
}

/** A charge's money arrived: called wherever the sandbox captures a charge. */
export function bookCharge(ctx: SandboxContext, charge: Stripe.Charge): void {
  const transaction = book(ctx, {
    type: "charge",
    reportingCategory: "charge",
    source: charge,
    amount: charge.amount_captured,
    fee: chargeFee(charge.amount_captured),
    currency: charge.currency,
    description: charge.description,
  });
  charge.balance_transaction = transaction.id;
}

export function bookRefund(ctx: SandboxContext, refund: Stripe.Refund): void {
  const transaction = book(ctx, {
    type: "refund",
    reportingCategory: "refund",
    source: refund,
    amount: -refund.amount,
    fee: 0,
    currency: refund.currency,
    description: "REFUND FOR CHARGE",
  });
  refund.balance_transaction = transaction.id;
}

function sourceOf(ctx: SandboxContext, id: string): Source | string {
  const data = ctx.store.data;
  return data.charges[id] ?? data.refunds[id] ?? data.disputes[id] ?? id;
}

/** `GET /v1/balance_transactions`, with `expand[]=data.source` rendering each source object. */
export function listBalanceTransactions(ctx: SandboxContext, params: Params): unknown {
  const type = optionalString(params, "type");
  const source = optionalString(params, "source");
  const currency = optionalString(params, "currency");
  const page = listOf(
    Object.values(ctx.store.data.balanceTransactions),
    params,
    "/v1/balance_transactions",
    (transaction) =>
      (type === undefined || transaction.type === type) &&
      (source === undefined || transaction.source === source) &&
      (currency === undefined || transaction.currency === currency),
  );
  const expand = optionalList(params, "expand") ?? [];
  if (!expand.includes("data.source")) return page;
  return {
    ...page,
    data: page.data.map((transaction) => ({
      ...transaction,
      source: typeof transaction.source === "string" ? sourceOf(ctx, transaction.source) : transaction.source,
    })),
  };
}

export function listRefunds(ctx: SandboxContext, params: Params): Stripe.ApiList<Stripe.Refund> {
  const charge = optionalString(params, "charge");
  const paymentIntent = optionalString(params, "payment_intent");
  return listOf(
    Object.values(ctx.store.data.refunds),
    params,
    "/v1/refunds",
    (refund) =>
      (charge === undefined || refund.charge === charge) &&
      (paymentIntent === undefined || refund.payment_intent === paymentIntent),
  );
}

export function listDisputes(ctx: SandboxContext, params: Params): Stripe.ApiList<Stripe.Dispute> {
  const charge = optionalString(params, "charge");
  const paymentIntent = optionalString(params, "payment_intent");
  return listOf(
    Object.values(ctx.store.data.disputes),
    params,
    "/v1/disputes",
    (dispute) =>
      (charge === undefined || dispute.charge === charge) &&
      (paymentIntent === undefined || dispute.payment_intent === paymentIntent),
  );
}
