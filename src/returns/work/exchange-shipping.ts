import type { ReturnRow } from "../return-records";
import type { WorkContext } from "./context";

/** Whether a return is an exchange, and the exchange that failed (its steps are in src/inngest/steps). */
export function createExchangeShippingWork(ctx: WorkContext) {
  const { deps, timeline, load } = ctx;
  return {
    isExchange: (row: ReturnRow) => row.lines.some((line) => line.exchangeSku),

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
