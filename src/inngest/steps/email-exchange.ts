import { emailTemplates, toOrderSummary } from "../../notifications/templates";
import { exchangeEmailKey, exchangeLines, type WorkContext } from "../../returns/return-work";
import { returnLabelWanted } from "../../shared/order-model";
import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const emailExchangeStepId = "email-exchange-tracking";

/** The exchange's tracking e-mailed once (key `exchange-shipped-<returnId>`). */
export const emailExchange = createStep({
  id: emailExchangeStepId,
  invoke: (ctx) =>
    ctx.step.run(emailExchangeStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.emailExchange(returnId, ctx.runId);
    }),
});

/** The exchange's tracking e-mail, once per return, and what it said on the timeline. */
export async function emailExchangeWork(returns: WorkContext, returnId: string, runId: string) {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  if (!row.exchange_tracking_number) throw new Error(`Exchange of return ${returnId} has not shipped yet`);
  // Ended as its label was bought (the label handed back): nothing is on its way.
  if (!returnLabelWanted("exchange", row.status)) return { status: "skipped" as const };
  const { order, lines } = await exchangeLines(returns, row);
  const content = {
    lines,
    trackingNumber: row.exchange_tracking_number,
    trackingUrl: row.exchange_tracking_url ?? deps.trackUrl(row.exchange_tracking_number),
  };
  const sent = await deps.sender.send({
    idempotencyKey: exchangeEmailKey(returnId),
    orderId: row.order_id,
    template: "exchangeShipped",
    to: order.email,
    content: emailTemplates.exchangeShipped({
      order: toOrderSummary(order, deps.orderUrl(order.id)),
      ...content,
    }),
  });
  await records.markExchangeSent(returnId);
  await timeline.record(row.order_id, "exchange-sent", { returnId, ...content, email: sent.status }, runId);
  return { status: sent.status };
}
