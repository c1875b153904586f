import { handBackUnwanted, type WorkContext } from "../../returns/return-work";
import { returnLabelWanted } from "../../shared/order-model";
import { parseStoredAddress } from "../../shipping/shipping-destinations";
import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const shipExchangeStepId = "ship-exchange";

/** The new items' label, once (reference `exchange-<returnId>`): the point of no return, no undo. */
export const shipExchange = createStep({
  id: shipExchangeStepId,
  invoke: (ctx) =>
    ctx.step.run(shipExchangeStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.shipExchange(returnId, ctx.runId);
    }),
});

/** The new items to the customer, on a label of their own, once (reference `exchange-<returnId>`). */
export async function shipExchangeWork(returns: WorkContext, returnId: string, runId: string) {
  const { deps, records, timeline, load } = returns;
  const row = await load(returnId);
  if (row.exchange_tracking_number) return { trackingNumber: row.exchange_tracking_number, created: false };
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
    const status = await handBackUnwanted(returns, now, "exchange", booking.trackingNumber, runId);
    return { trackingNumber: booking.trackingNumber, created: true, handedBack: status };
  }
  return { trackingNumber: booking.trackingNumber, created: true };
}
