import { handBackUnwanted, type WorkContext } from "../../returns/return-work";
import { returnLabelWanted } from "../../shared/order-model";
import { parseStoredAddress } from "../../shipping/shipping-destinations";
import { returnWorkOf } from "./return-context";
import { createStep, defineUndo } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const createReturnLabelStepId = "create-return-label";

/** The undo of the label: handed back to the carrier unless a scan shows it used. */
export const refundReturnLabel = defineUndo("refund-return-label", (ctx) =>
  ctx.step.run("refund-return-label", () => {
    const { work, returnId } = returnWorkOf(ctx);
    return work.handBackLabel(returnId, ctx.runId);
  }),
);

export const createReturnLabel = createStep({
  id: createReturnLabelStepId,
  invoke: (ctx) =>
    ctx.step.run(createReturnLabelStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.buyLabel(returnId, ctx.runId);
    }),
  undo: refundReturnLabel,
});

/** Tracker statuses before the carrier has the parcel: an unused label can still be handed back. */
const unscanned = new Set([null, "unknown", "pre_transit"]);

/** The return label, bought once (reference `return-<returnId>`, and the recorded tracking number). */
export async function buyReturnLabelWork(returns: WorkContext, returnId: string, runId: string) {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  if (row.label_tracking_number) {
    return { trackingNumber: row.label_tracking_number, created: false };
  }
  const destination = await records.destination(returnId);
  const address = parseStoredAddress(destination?.shipping_address);
  if (!address) throw new Error(`Order ${row.order_id} has no address to send a return label from`);
  const booking = await deps.labels.buy({
    returnId,
    address,
    lines: row.lines.map((line) => ({ ...line, weightOz: destination?.weights?.[line.sku] ?? null })),
  });
  await records.recordLabel(returnId, booking);
  await timeline.record(
    row.order_id,
    "return-label-created",
    { returnId, trackingNumber: booking.trackingNumber, carrier: booking.carrier },
    runId,
  );
  // The fence after the carrier call (decision 0170): recorded first, then read, so a close
  // landing after this read finds the label on the row (its cleanup hands it back) and one
  // landing before it is seen here. Ended meanwhile: the label goes back now.
  const now = await load(returnId);
  if (!returnLabelWanted("return", now.status)) {
    const status = await handBackUnwanted(returns, now, "return", booking.trackingNumber, runId);
    return { trackingNumber: booking.trackingNumber, created: true, handedBack: status };
  }
  return { trackingNumber: booking.trackingNumber, created: true };
}

/**
 * The undo of the label: handed back to the carrier while no scan shows it used. A used label
 * (the parcel moved, or arrived) is kept and paid for, as the carrier bills it.
 */
export async function handBackReturnLabelWork(returns: WorkContext, returnId: string, runId: string) {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  if (!row.label_tracking_number) return { outcome: "no-label" as const };
  if (row.received_at || !unscanned.has(row.label_tracker_status)) return { outcome: "used" as const };
  const status = await deps.labels.handBack(returnId);
  if (status !== "not-found") await records.recordLabelRefund(returnId, status);
  await timeline.record(row.order_id, "return-label-refund-requested", { returnId, status }, runId);
  return { outcome: status };
}
