import type { GetStepTools, Inngest } from "inngest";
import type { PaymentSettlement } from "../../notifications/customer-messages";
import type { WorkflowDependencies } from "../dependencies";

/**
 * Compensation steps shared by fulfill-order (payment failed, out of stock, cancelled before
 * the claim) and cleanup-cancelled-order. Each is one step with one side effect, idempotent by
 * the order id: stock reservations release once, Stripe calls carry `void-`/`refund-` keys.
 */
type StepTools = GetStepTools<Inngest>;

interface Context {
  step: StepTools;
  deps: WorkflowDependencies;
  orderId: string;
  runId: string;
}

export function releaseStock({ step, deps, orderId, runId }: Context) {
  return step.run("release-stock", async () => {
    const released = await deps.inventory.release(orderId);
    await deps.timeline.record(orderId, "stock-released", { released }, runId);
    return released;
  });
}

/**
 * Gives the customer's money back: voids an uncaptured authorization, or refunds in full when
 * the money was already taken (automatic capture) and `refundCaptured` allows it.
 */
export function returnPayment(
  { step, deps, orderId, runId }: Context,
  options: { stepId: string; refundCaptured: boolean },
) {
  return step.run(options.stepId, async (): Promise<PaymentSettlement> => {
    const order = await deps.orders.findForFulfilment(orderId);
    const intentId = order?.paymentIntentId;
    if (!order || !intentId) {
      await deps.timeline.record(orderId, "payment-not-returned", { reason: "no payment intent" }, runId);
      return "none";
    }
    const voided = await deps.payments.voidAuthorization(intentId, `void-${orderId}`);
    if (voided.outcome !== "not-voidable") {
      await deps.paymentRecords.recordVoided(orderId, intentId, order.currency);
      await deps.timeline.record(orderId, "authorization-voided", { outcome: voided.outcome }, runId);
      return "voided";
    }
    if (voided.state === "succeeded" && options.refundCaptured) {
      const refund = await deps.payments.refundInFull(intentId, `refund-${orderId}`);
      await deps.paymentRecords.recordCaptured(orderId, intentId, refund.amountRefunded, order.currency);
      await deps.paymentRecords.recordRefunded(orderId, refund.amountRefunded);
      await deps.timeline.record(
        orderId,
        "payment-refunded",
        { refundId: refund.refundId, amount: refund.amountRefunded },
        runId,
      );
      return "refunded";
    }
    await deps.timeline.record(orderId, "payment-not-returned", { state: voided.state }, runId);
    return "none";
  });
}

export async function cancelOrder(context: Context, reason: string) {
  const { step, deps, orderId, runId } = context;
  await releaseStock(context);
  const settlement = await returnPayment(context, { stepId: "return-payment", refundCaptured: true });
  await step.run("mark-cancelled", async () => {
    await deps.orders.transition(
      orderId,
      ["pending", "authorized", "paid", "fulfilling", "payment_processing"],
      "cancelled",
    );
    await deps.timeline.record(orderId, "cancelled", { reason, settlement }, runId);
  });
  await step.run("send-cancelled", () => deps.messages.cancelled(orderId, settlement));
  return settlement;
}
