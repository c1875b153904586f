import type { ShortLine } from "../../inventory/inventory";
import type { ShortSettlement } from "./charge-card";
import { createStep } from "./saga";

export const sendShortNoticeStepId = "send-short-notice";

/**
 * Tells the customer, once (key `short-lines-<orderId>`), which lines of a partly fulfilled order
 * do not ship and that they were not charged (the partial capture released the rest of the hold)
 * or were refunded. Sent as soon as the money is settled, before the label: the customer hears of
 * it whether or not a parcel follows (a digital order, a hold).
 */
export const sendShortNotice = createStep({
  id: sendShortNoticeStepId,
  invoke: ({ step, deps, orderId, runId }, short: readonly ShortLine[], settlement: ShortSettlement) =>
    step.run(sendShortNoticeStepId, async () => {
      const sent = await deps.messages.shortLines(orderId, {
        short: short.map(({ sku, short: missing, amount }) => ({ sku, short: missing, amount })),
        settlement: settlement.settlement,
      });
      await deps.timeline.record(orderId, "short-lines-notice-sent", { ...sent }, runId);
      return sent;
    }),
});
