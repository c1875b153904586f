import { emailTemplates, toOrderSummary } from "../../notifications/templates";
import { parseStoredAddress } from "../../shipping/shipping-destinations";
import { returnLabelWanted } from "../../shared/order-model";
import { returnLineWorth } from "../return-money";
import { returnRefund } from "../return-policy";
import { type WorkContext } from "./context";
import * as keys from "./keys";

/** Tracker statuses before the carrier has the parcel: an unused label can still be handed back. */
const unscanned = new Set([null, "unknown", "pre_transit"]);

/** The return label: bought once (reference `return-<returnId>`), handed back unused, e-mailed once. */
export function createLabelWork(ctx: WorkContext) {
  const { deps, records, timeline, load } = ctx;
  return {
    async buyLabel(returnId: string, runId: string) {
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
        const status = await handBackUnwanted(ctx, now, "return", booking.trackingNumber, runId);
        return { trackingNumber: booking.trackingNumber, created: true, handedBack: status };
      }
      return { trackingNumber: booking.trackingNumber, created: true };
    },

    /**
     * The undo of the label: handed back to the carrier while no scan shows it used. A used label
     * (the parcel moved, or arrived) is kept and paid for, as the carrier bills it.
     */
    async handBackLabel(returnId: string, runId: string) {
      const row = await load(returnId);
      if (!row.label_tracking_number) return { outcome: "no-label" as const };
      if (row.received_at || !unscanned.has(row.label_tracker_status)) return { outcome: "used" as const };
      const status = await deps.labels.handBack(returnId);
      if (status !== "not-found") await records.recordLabelRefund(returnId, status);
      await timeline.record(row.order_id, "return-label-refund-requested", { returnId, status }, runId);
      return { outcome: status };
    },

    async emailLabel(returnId: string, runId: string) {
      const row = await load(returnId);
      if (!row.label_tracking_number || !row.label_url)
        throw new Error(`Return ${returnId} has no label yet`);
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
      const refund = returnRefund(
        row.lines,
        deps.fee,
        await returnLineWorth(deps.db, row.order_id, returnId),
      );
      const trackingUrl = row.label_tracking_url ?? deps.trackUrl(row.label_tracking_number);
      const content = {
        labelUrl: row.label_url,
        trackingNumber: row.label_tracking_number,
        trackingUrl,
        lines,
        refundAmount: refund.amount,
      };
      const sent = await deps.sender.send({
        idempotencyKey: keys.returnLabelEmailKey(returnId),
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
    },
  };
}

/**
 * Hands back a label the return no longer wants (it ended while the label was bought), with one
 * `return-label-refund-requested` entry for the run; a label the carrier will not take back is
 * for ops, told once per return and label.
 */
export async function handBackUnwanted(
  ctx: WorkContext,
  row: { id: string; order_id: string; status: string },
  label: "return" | "exchange",
  trackingNumber: string,
  runId: string,
): Promise<string> {
  const { deps, records, timeline } = ctx;
  const status = await deps.labels.handBack(row.id, label);
  if (label === "return" && status !== "not-found") await records.recordLabelRefund(row.id, status);
  await timeline.record(
    row.order_id,
    "return-label-refund-requested",
    { returnId: row.id, status, label, trackingNumber, why: `the return was ${row.status} as it was bought` },
    label === "return" ? runId : `${runId}/exchange`,
  );
  if (status === "not-voidable" || status === "rejected") {
    await deps.alerts.notify({
      key: `unwanted-${label}-label-${row.id}`,
      title: `A ${label} label bought for an ended return was not taken back`,
      fields: {
        orderId: row.order_id,
        returnId: row.id,
        trackingNumber,
        action: "Ask the carrier to refund the label; make sure no parcel is sent on it",
      },
    });
  }
  return status;
}
