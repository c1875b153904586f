import { isAppError } from "../../errors";
import { returnLineWorth } from "../../returns/return-money";
import { returnRefund } from "../../returns/return-policy";
import type { WorkContext } from "../../returns/return-work";
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
  const ask = (amount: number) =>
    deps.refunds.refund({
      orderId: row.order_id,
      amount,
      refundId: returnId,
      reason: `return ${returnId}`,
      by: "process-return",
      handBackLabel: false,
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
  let outcome;
  try {
    outcome = await ask(refund.amount);
  } catch (error) {
    if (isAppError(error) && error.code === "charge_disputed")
      return withhold((error.details as { disputes?: string[] } | undefined)?.disputes ?? []);
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
