import { emailTemplates, toOrderSummary } from "../../notifications/templates";
import { parseStoredAddress } from "../../shipping/shipping-destinations";
import { returnLabelWanted } from "../../shared/order-model";
import type { ReturnRow } from "../return-records";
import { handBackUnwanted } from "./labels";
import { exchangeLines, type WorkContext } from "./context";
import * as keys from "./keys";

/** The exchange's new items: reserved, shipped on their own label, e-mailed, or failed. */
export function createExchangeShippingWork(ctx: WorkContext) {
  const { deps, records, timeline, load } = ctx;
  return {
    isExchange: (row: ReturnRow) => row.lines.some((line) => line.exchangeSku),

    async reserveExchange(returnId: string, runId: string) {
      return { movements: await records.reserveExchange(returnId, runId) };
    },

    /** The undo of the reservation: the new items back on the shelf unless they shipped. */
    async releaseExchange(returnId: string, runId: string) {
      return { movements: await records.releaseExchange(returnId, runId) };
    },

    /** The new items to the customer, on a label of their own, once (reference `exchange-<returnId>`). */
    async shipExchange(returnId: string, runId: string) {
      const row = await load(returnId);
      if (row.exchange_tracking_number)
        return { trackingNumber: row.exchange_tracking_number, created: false };
      const destination = await records.destination(returnId);
      const address = parseStoredAddress(destination?.shipping_address);
      if (!address) throw new Error(`Order ${row.order_id} has no address to send the exchange to`);
      const lines = row.lines.flatMap((line) =>
        line.exchangeSku
          ? [
              {
                sku: line.exchangeSku,
                quantity: line.quantity,
                weightOz: destination?.weights?.[line.exchangeSku] ?? null,
              },
            ]
          : [],
      );
      const booking = await deps.labels.shipExchange({ returnId, address, lines });
      await records.recordExchangeShipment(returnId, booking);
      await timeline.record(
        row.order_id,
        "exchange-shipped",
        { returnId, trackingNumber: booking.trackingNumber, carrier: booking.carrier, lines },
        runId,
      );
      // The fence after the carrier call (decision 0170), as for the return label.
      const now = await load(returnId);
      if (!returnLabelWanted("exchange", now.status)) {
        const status = await handBackUnwanted(ctx, now, "exchange", booking.trackingNumber, runId);
        return { trackingNumber: booking.trackingNumber, created: true, handedBack: status };
      }
      return { trackingNumber: booking.trackingNumber, created: true };
    },

    async emailExchange(returnId: string, runId: string) {
      const row = await load(returnId);
      if (!row.exchange_tracking_number)
        throw new Error(`Exchange of return ${returnId} has not shipped yet`);
      // Ended as its label was bought (the label handed back): nothing is on its way.
      if (!returnLabelWanted("exchange", row.status)) return { status: "skipped" as const };
      const { order, lines } = await exchangeLines(ctx, row);
      const content = {
        lines,
        trackingNumber: row.exchange_tracking_number,
        trackingUrl: row.exchange_tracking_url ?? deps.trackUrl(row.exchange_tracking_number),
      };
      const sent = await deps.sender.send({
        idempotencyKey: keys.exchangeEmailKey(returnId),
        orderId: row.order_id,
        template: "exchangeShipped",
        to: order.email,
        content: emailTemplates.exchangeShipped({
          order: toOrderSummary(order, deps.orderUrl(order.id)),
          ...content,
        }),
      });
      await records.markExchangeSent(returnId);
      await timeline.record(
        row.order_id,
        "exchange-sent",
        { returnId, ...content, email: sent.status },
        runId,
      );
      return { status: sent.status };
    },

    /**
     * The exchange's parcel could not be booked, every retry spent, and its undos ran (the items
     * released, the difference refunded): the timeline says the exchange failed and ops are told,
     * once per return (the notice's key). The return stays open for ops to settle and close.
     */
    async failExchange(returnId: string, runId: string, reason: string) {
      const row = await load(returnId);
      const detail = {
        returnId,
        reason,
        released: row.exchange_released_at !== null,
        chargeStatus: row.exchange_charge_status,
      };
      await timeline.record(row.order_id, "exchange-failed", detail, runId);
      await deps.alerts.notify({
        key: `exchange-failed-${returnId}`,
        title: "Exchange not shipped: its parcel could not be booked",
        fields: {
          orderId: row.order_id,
          returnId,
          reason,
          chargeStatus: row.exchange_charge_status ?? "none",
          action:
            "The items went back to stock and any difference was refunded; settle with the customer, then close the return",
        },
      });
      return detail;
    },
  };
}
