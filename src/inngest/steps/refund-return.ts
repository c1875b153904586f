import { isAppError } from "../../errors";
import { returnLineWorth } from "../../returns/return-money";
import { returnRefund } from "../../returns/return-policy";
import type { RefundOutcome } from "../../orders/refund-order";
import { restRefundIdOf, type WorkContext } from "../../returns/return-work";
import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const refundReturnStepId = "refund-return";

/** Money back at Stripe, once (refund row and Stripe key by the return's id): no undo. */
export const refundReturn = createStep({
  id: refundReturnStepId,
  invoke: (ctx) =>
    ctx.step.run(refundReturnStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.refund(returnId, ctx.runId);
    }),
});

/** One alert per return whose refund Stripe refused because the money was already back. */
export const refundedAtStripeAlertKey = (returnId: string) => `return-refunded-at-stripe-${returnId}`;

interface RefusedByStripe {
  refusedByStripe: string;
  refundedAtStripe?: number | null;
  refunded?: number;
  captured?: number;
}

/** refund-order's answer when Stripe itself refused because the money is already refunded. */
function refusedByStripe(error: unknown): RefusedByStripe | null {
  if (!isAppError(error) || error.code !== "order_not_refundable") return null;
  const details = error.details as Partial<RefusedByStripe> | undefined;
  return details?.refusedByStripe ? (details as RefusedByStripe) : null;
}

/** The returned lines less the restocking fee, refunded once (the refund row's id is the return's). */
export async function refundReturnWork(
  returns: WorkContext,
  returnId: string,
  runId: string,
): Promise<{ amount: number; fee: number; refundId: string | null; withheld?: boolean }> {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  // The same figure on every retry: only earlier returns' settled units count, never this one.
  const refund = returnRefund(row.lines, deps.fee, await returnLineWorth(deps.db, row.order_id, returnId));
  if (refund.amount <= 0) {
    await records.recordRefund(returnId, 0, refund.fee);
    await timeline.record(row.order_id, "return-refunded", { returnId, amount: 0, fee: refund.fee }, runId);
    return { amount: 0, fee: refund.fee, refundId: null };
  }
  const ask = (amount: number, refundId = returnId) =>
    deps.refunds.refund({
      orderId: row.order_id,
      amount,
      refundId,
      reason: `return ${returnId}`,
      by: "process-return",
      handBackLabel: false,
      // Stripe's "already refunded" settles this return: the payment's total follows Stripe's.
      catchUpOnRefusal: true,
    });
  const withhold = async (disputes: string[]) => {
    // The payment is charged back: the cardholder gets the money through the dispute, so the
    // return refunds nothing (refund-order told ops once per dispute). A retry finds the same.
    await records.recordRefund(returnId, 0, refund.fee);
    await timeline.record(
      row.order_id,
      "return-refund-withheld",
      { returnId, due: refund.amount, fee: refund.fee, disputes },
      runId,
    );
    return { amount: 0, fee: refund.fee, refundId: null, withheld: true };
  };
  const backAtStripe = async (details: RefusedByStripe) => {
    // Stripe refused because the money is already back (a Dashboard refund whose webhook has not
    // reached us): nothing more is refunded by us and the return settles on that; refund-order
    // brought the payment's total up to Stripe's. A retry meets the same refusal (the same key),
    // and ops hear once per return.
    await records.recordRefund(returnId, 0, refund.fee);
    await timeline.record(
      row.order_id,
      "return-refunded-at-stripe",
      {
        returnId,
        due: refund.amount,
        fee: refund.fee,
        refundedAtStripe: details.refundedAtStripe ?? details.refunded ?? null,
        captured: details.captured ?? null,
        stripeCode: details.refusedByStripe,
      },
      runId,
    );
    await deps.alerts.notify({
      key: refundedAtStripeAlertKey(returnId),
      title: "Return not refunded: the payment was already refunded at Stripe",
      fields: {
        orderId: row.order_id,
        returnId,
        due: refund.amount,
        refundedAtStripe: details.refundedAtStripe ?? details.refunded ?? "unknown",
        captured: details.captured ?? "unknown",
        action:
          "The money went back outside this service (the Stripe Dashboard): check the customer got what the return is owed, settle any difference by hand",
      },
    });
    return { amount: 0, fee: refund.fee, refundId: null };
  };
  const rest = restRefundIdOf(returnId);
  const refundedRest = async (outcome: RefundOutcome) => {
    // Stripe refused the return's refund as more than was left (refunded in part at the
    // Dashboard, its webhook not here): what was left went back under its own key, and the
    // shortfall is on the timeline and told to ops once per return. Stripe's total before it
    // is the capture less that refund, so a replay records the same figures.
    const shortfall = refund.amount - outcome.amount;
    const refundedAtStripe = outcome.captured - outcome.amount;
    await records.recordRefund(returnId, outcome.amount, refund.fee);
    await timeline.record(
      row.order_id,
      "return-refunded-at-stripe",
      {
        returnId,
        due: refund.amount,
        fee: refund.fee,
        refundedAtStripe,
        captured: outcome.captured,
        stripeCode: "amount_too_large",
        refunded: outcome.amount,
        shortfall,
      },
      runId,
    );
    await timeline.record(
      row.order_id,
      "return-refunded",
      {
        returnId,
        amount: outcome.amount,
        fee: refund.fee,
        stripeRefund: outcome.providerId,
        due: refund.amount,
      },
      runId,
    );
    await deps.alerts.notify({
      key: refundedAtStripeAlertKey(returnId),
      title: "Return refunded in part: the payment was already refunded in part at Stripe",
      fields: {
        orderId: row.order_id,
        returnId,
        due: refund.amount,
        refunded: outcome.amount,
        shortfall,
        refundedAtStripe,
        captured: outcome.captured,
        action:
          "The rest went back outside this service (the Stripe Dashboard): check the customer got what the return is owed, settle the shortfall by hand",
      },
    });
    return { amount: outcome.amount, fee: refund.fee, refundId: outcome.refundId };
  };
  // Replayed after what was left was refunded: that refund (asked again, it is the answer) settles it.
  const earlierRest = await deps.db.refund.findUnique({ where: { id: rest }, select: { amount: true } });
  if (earlierRest) return refundedRest(await ask(earlierRest.amount, rest));
  const backOrRest = async (details: RefusedByStripe) => {
    const { captured, refundedAtStripe } = details;
    // Only on Stripe's own total (the records' may be behind it); a second refusal settles.
    if (
      details.refusedByStripe !== "amount_too_large" ||
      typeof refundedAtStripe !== "number" ||
      captured === undefined ||
      captured - refundedAtStripe <= 0
    )
      return backAtStripe(details);
    const left = captured - refundedAtStripe;
    let outcome;
    try {
      outcome = await ask(Math.min(left, refund.amount), rest);
    } catch (again) {
      const refusedAgain = refusedByStripe(again);
      if (refusedAgain) return backAtStripe(refusedAgain);
      if (isAppError(again) && again.code === "charge_disputed")
        return withhold((again.details as { disputes?: string[] } | undefined)?.disputes ?? []);
      throw again;
    }
    return refundedRest(outcome);
  };
  let outcome;
  try {
    outcome = await ask(refund.amount);
  } catch (error) {
    if (isAppError(error) && error.code === "charge_disputed")
      return withhold((error.details as { disputes?: string[] } | undefined)?.disputes ?? []);
    const refused = refusedByStripe(error);
    if (refused) return backOrRest(refused);
    // Refunded by hand already (in part or in full): what is left is refunded, ops are told;
    // a retry of this step could never refund more.
    if (!isAppError(error) || error.code !== "refund_exceeds_captured") throw error;
    const left = (error.details as { refundable?: number } | undefined)?.refundable ?? 0;
    await deps.alerts.notify({
      key: `return-refund-short-${returnId}`,
      title: "Return refund exceeds what is left to refund",
      fields: {
        orderId: row.order_id,
        returnId,
        due: refund.amount,
        refundable: left,
        action: "The order was refunded by other means; settle the rest with the customer",
      },
    });
    if (left <= 0) {
      await records.recordRefund(returnId, 0, refund.fee);
      await timeline.record(
        row.order_id,
        "return-refunded",
        { returnId, amount: 0, fee: refund.fee, due: refund.amount },
        runId,
      );
      return { amount: 0, fee: refund.fee, refundId: null };
    }
    try {
      outcome = await ask(left);
    } catch (again) {
      if (isAppError(again) && again.code === "charge_disputed")
        return withhold((again.details as { disputes?: string[] } | undefined)?.disputes ?? []);
      const refusedAgain = refusedByStripe(again);
      if (refusedAgain) return backAtStripe(refusedAgain);
      throw again;
    }
  }
  await records.recordRefund(returnId, outcome.amount, refund.fee);
  await timeline.record(
    row.order_id,
    "return-refunded",
    { returnId, amount: outcome.amount, fee: refund.fee, stripeRefund: outcome.providerId },
    runId,
  );
  return { amount: outcome.amount, fee: refund.fee, refundId: outcome.refundId };
}
