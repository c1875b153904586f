import type { Timeline } from "../timeline/timeline";
import type { ReturnRecords } from "./return-records";
import type { ReturnActions } from "./returns";

export interface ReturnTrackerOutcome {
  returnId: string;
  orderId: string;
  status: string;
  received?: boolean;
  /** The exchange's parcel to the customer, not the return parcel. */
  exchange?: boolean;
}

/**
 * The return labels' trackers, for the carrier webhook (src/shipping/carrier-webhook.ts): a
 * tracking number that is no outbound parcel's is looked up among the returns. Its status is
 * recorded; `delivered` means the parcel is back at the warehouse, so the return is received
 * (resellable: the carrier cannot tell damage) through the same use case ops use, which makes the
 * carrier's repeated event change nothing more.
 */
export function createReturnTracking(deps: {
  records: Pick<
    ReturnRecords,
    "byTrackingNumber" | "recordTrackerStatus" | "byExchangeTrackingNumber" | "recordExchangeTrackerStatus"
  >;
  actions: Pick<ReturnActions, "receive">;
  timeline: Pick<Timeline, "record">;
}) {
  /** The exchange's parcel on its way to the customer: its status kept, its delivery on the timeline once. */
  async function exchangeTracked(event: { trackingNumber: string; status: string }) {
    const found = await deps.records.byExchangeTrackingNumber(event.trackingNumber);
    if (!found) return null;
    const moved = await deps.records.recordExchangeTrackerStatus(found.id, event.status);
    if (moved && event.status === "delivered") {
      await deps.timeline.record(found.order_id, "exchange-delivered", {
        returnId: found.id,
        trackingNumber: event.trackingNumber,
      });
    }
    return { returnId: found.id, orderId: found.order_id, status: event.status, exchange: true };
  }

  return {
    async tracked(event: { trackingNumber: string; status: string }): Promise<ReturnTrackerOutcome | null> {
      const found = await deps.records.byTrackingNumber(event.trackingNumber);
      if (!found) return exchangeTracked(event);
      await deps.records.recordTrackerStatus(found.id, event.status);
      const outcome = { returnId: found.id, orderId: found.order_id, status: event.status };
      if (event.status !== "delivered") return outcome;
      if (!["requested", "approved", "received"].includes(found.status))
        return { ...outcome, received: false };
      await deps.actions.receive({ returnId: found.id, by: "carrier", condition: "resellable" });
      return { ...outcome, received: true };
    },
  };
}

export type ReturnTracking = ReturnType<typeof createReturnTracking>;
