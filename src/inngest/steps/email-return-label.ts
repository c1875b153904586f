import { emailTemplates, toOrderSummary } from "../../notifications/templates";
import { returnLineWorth } from "../../returns/return-money";
import { returnRefund } from "../../returns/return-policy";
import { returnLabelEmailKey, type WorkContext } from "../../returns/return-work";
import { returnLabelWanted } from "../../shared/order-model";
import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const emailReturnLabelStepId = "email-return-label";

/** E-mailed once (key `return-label-<returnId>`); nothing to take back. */
export const emailReturnLabel = createStep({
  id: emailReturnLabelStepId,
  invoke: (ctx) =>
    ctx.step.run(emailReturnLabelStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.emailLabel(returnId, ctx.runId);
    }),
});

/** The label e-mail, once per return (key `return-label-<returnId>`), and what it said on the timeline. */
export async function emailReturnLabelWork(returns: WorkContext, returnId: string, runId: string) {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  if (!row.label_tracking_number || !row.label_url) throw new Error(`Return ${returnId} has no label yet`);
  // Handed back (the return ended as it was bought): no label for the customer to use.
  if (!returnLabelWanted("return", row.status) && row.label_refund_status !== null)
    return { status: "skipped" as const };
  const order = await deps.db.order.findUniqueOrThrow({
    where: { id: row.order_id },
    include: { lines: { orderBy: { sku: "asc" } } },
  });
  const names = new Map(order.lines.map((line) => [line.sku, line.name]));
  const lines = row.lines.map((line) => ({
    name: names.get(line.sku) ?? line.sku,
    quantity: line.quantity,
  }));
  const refund = returnRefund(row.lines, deps.fee, await returnLineWorth(deps.db, row.order_id, returnId));
  const trackingUrl = row.label_tracking_url ?? deps.trackUrl(row.label_tracking_number);
  const content = {
    labelUrl: row.label_url,
    trackingNumber: row.label_tracking_number,
    trackingUrl,
    lines,
    refundAmount: refund.amount,
  };
  const sent = await deps.sender.send({
    idempotencyKey: returnLabelEmailKey(returnId),
    orderId: row.order_id,
    template: "returnLabel",
    to: order.email,
    content: emailTemplates.returnLabel({
      order: toOrderSummary(order, deps.orderUrl(order.id)),
      ...content,
    }),
  });
  await records.markLabelSent(returnId);
  // What the e-mail said, for the console's view of it (email-renderer.ts).
  await timeline.record(
    row.order_id,
    "return-label-sent",
    { returnId, ...content, email: sent.status },
    runId,
  );
  return { status: sent.status };
}
