import { emailTemplates, toOrderSummary } from "../../notifications/templates";
import { PaymentRejectedError } from "../../payments/payment-gateway";
import { exchangeCharge } from "../../returns/return-policy";
import type { ReturnRow } from "../../returns/return-records";
import {
  endedStatuses,
  exchangeChargeFailedEmailKey,
  exchangeChargeKey,
  exchangeChargeRefundKey,
  exchangeLines,
  isDisputed,
  refundRefusedAsDisputed,
  type ExchangeChargeRefund,
  type WorkContext,
} from "../../returns/return-work";
import { returnWorkOf } from "./return-context";
import { createStep, defineUndo } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const chargeExchangeStepId = "charge-exchange-difference";

/** The undo: the difference refunded in full (key `exchange-charge-refund-<returnId>`) unless the exchange shipped. */
export const refundExchangeCharge = defineUndo("refund-exchange-charge", (ctx) =>
  ctx.step.run("refund-exchange-charge", () => {
    const { work, returnId } = returnWorkOf(ctx);
    return work.refundExchangeCharge(returnId, ctx.runId);
  }),
);

/**
 * A dearer exchange's difference, charged off-session once (Stripe key
 * `exchange-charge-<returnId>`) before anything is reserved or shipped; `failed` when the bank
 * refused it, and the run goes no further. Only a charge taken owes the undo.
 */
export const chargeExchange = createStep({
  id: chargeExchangeStepId,
  invoke: (ctx) =>
    ctx.step.run(chargeExchangeStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.chargeExchange(returnId, ctx.runId);
    }),
  undo: refundExchangeCharge,
  owesUndo: (out) => out.outcome === "charged",
});

/**
 * A dearer exchange's difference, charged once off-session on the card checkout saved (Stripe
 * key `exchange-charge-<returnId>`), before anything is reserved or shipped. Recorded on the
 * return (a retried step finds it there; one that crashed before recording asks Stripe again
 * with the same key and gets the same answer). A refusal (the bank wants the customer
 * present, or declines) is an outcome, not an error: recorded, told to ops and, once, to
 * the customer; the run stops there, and the return waits for ops.
 */
export async function chargeExchangeWork(returns: WorkContext, returnId: string, runId: string) {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  if (row.exchange_charge_status === "failed")
    return { outcome: "failed" as const, amount: row.exchange_charge_amount ?? 0 };
  if (row.exchange_charge_status === "awaiting_payment" || row.exchange_charge_status === "unpaid")
    return { outcome: "awaiting-payment" as const, amount: row.exchange_charge_amount ?? 0 };
  if (row.exchange_charge_status)
    return {
      outcome: "charged" as const,
      amount: row.exchange_charge_amount ?? 0,
      paymentIntentId: row.exchange_charge_intent_id,
    };
  const amount = exchangeCharge(row.lines);
  if (amount <= 0) return { outcome: "none" as const, amount: 0 };
  // Ended by ops already (the run's cancel may not have reached this attempt): nothing to charge.
  if (endedStatuses.includes(row.status)) return { outcome: "ended" as const, amount: 0 };
  const card = await records.savedCard(returnId);
  let charged;
  try {
    if (!card?.stripe_customer_id || !card.payment_method_id)
      throw new PaymentRejectedError("declined", `order ${row.order_id} has no saved card`, {
        code: "no_saved_card",
      });
    charged = await deps.payments.chargeOffSession(
      {
        customerId: card.stripe_customer_id,
        paymentMethodId: card.payment_method_id,
        amount,
        currency: card.currency.trim().toLowerCase(),
        metadata: { orderId: row.order_id, returnId, purpose: "exchange-difference" },
      },
      exchangeChargeKey(returnId),
    );
  } catch (error) {
    if (!(error instanceof PaymentRejectedError)) throw error;
    if (error.reason === "authentication_required" && deps.checkouts) {
      // The bank wants the customer present: they pay on a Checkout page (the next steps).
      await records.recordExchangeCharge(returnId, {
        amount,
        status: "awaiting_payment",
        paymentIntentId: error.paymentIntentId,
        error: error.message,
      });
      await timeline.record(
        row.order_id,
        "exchange-charge-failed",
        { returnId, amount, reason: "authentication_required", message: error.message, checkout: true },
        runId,
      );
      return { outcome: "awaiting-payment" as const, amount };
    }
    await records.recordExchangeCharge(returnId, {
      amount,
      status: "failed",
      paymentIntentId: error.paymentIntentId,
      error: error.message,
    });
    await chargeFailed(returns, row, amount, error, runId);
    return { outcome: "failed" as const, amount };
  }
  await records.recordExchangeCharge(returnId, {
    amount: charged.amount,
    status: "charged",
    paymentIntentId: charged.paymentIntentId,
  });
  await timeline.record(
    row.order_id,
    "exchange-charged",
    {
      returnId,
      amount: charged.amount,
      currency: charged.currency,
      paymentIntentId: charged.paymentIntentId,
    },
    runId,
  );
  // A reject or close that landed while Stripe was answering cancelled the run, and its
  // cleanup may have looked before this charge was recorded: the step gives it back itself
  // (the same refund key as the undo's, so the two together refund once).
  if (endedStatuses.includes((await load(returnId)).status)) {
    const refund = await refundExchangeChargeWork(returns, returnId, runId);
    return { outcome: "refunded" as const, amount: charged.amount, refund };
  }
  return {
    outcome: "charged" as const,
    amount: charged.amount,
    paymentIntentId: charged.paymentIntentId,
  };
}

/**
 * The undo of the charge: the difference given back in full (key
 * `exchange-charge-refund-<returnId>`) when the exchange ends before its parcel was booked.
 * A shipped exchange keeps its charge: the customer has the item.
 */
export async function refundExchangeChargeWork(
  returns: WorkContext,
  returnId: string,
  runId: string,
): Promise<ExchangeChargeRefund> {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  const intentId = row.exchange_charge_intent_id;
  if (row.exchange_charge_status !== "charged" || !intentId) return { outcome: "not-charged" as const };
  if (row.exchange_tracking_number) return { outcome: "shipped" as const };
  let refund;
  try {
    refund = await deps.payments.refundInFull(intentId, exchangeChargeRefundKey(returnId));
  } catch (error) {
    if (isDisputed(error)) return refundRefusedAsDisputed(returns, row, intentId, runId);
    throw error;
  }
  if (await records.recordExchangeChargeRefund(returnId, refund.refundId)) {
    await timeline.record(
      row.order_id,
      "exchange-charge-refunded",
      {
        returnId,
        amount: refund.amountRefunded,
        paymentIntentId: row.exchange_charge_intent_id,
        refundId: refund.refundId,
      },
      runId,
    );
  }
  return { outcome: "refunded" as const, amount: refund.amountRefunded, refundId: refund.refundId };
}

/** What a refused exchange charge tells: the timeline, ops, and the customer once. */
async function chargeFailed(
  returns: WorkContext,
  row: ReturnRow,
  amount: number,
  error: PaymentRejectedError,
  runId: string,
) {
  const { deps, timeline } = returns;
  const { order, lines } = await exchangeLines(returns, row);
  const reason = error.reason === "authentication_required" ? "authentication_required" : "declined";
  const detail = {
    returnId: row.id,
    amount,
    reason,
    message: error.message,
    paymentIntentId: error.paymentIntentId,
    lines,
  };
  await timeline.record(row.order_id, "exchange-charge-failed", detail, runId);
  await deps.alerts.notify({
    key: `exchange-charge-failed-${row.id}`,
    title: "Exchange not shipped: the difference could not be charged",
    fields: {
      orderId: row.order_id,
      returnId: row.id,
      amount,
      reason: error.message,
      action:
        "The customer was e-mailed; settle with them (another card, or a refund instead), then close the return",
    },
  });
  const sent = await deps.sender.send({
    idempotencyKey: exchangeChargeFailedEmailKey(row.id),
    orderId: row.order_id,
    template: "exchangeChargeFailed",
    to: order.email,
    content: emailTemplates.exchangeChargeFailed({
      order: toOrderSummary(order, deps.orderUrl(order.id)),
      lines,
      amount,
      reason,
    }),
  });
  return sent.status;
}
