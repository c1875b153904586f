import type { ShipmentNotice } from "../../notifications/customer-messages";
import { labelAlertKey } from "../../shipping/label-void";
import type { WorkflowDependencies } from "../dependencies";

type HandBackDeps = Pick<WorkflowDependencies, "shipments" | "timeline" | "orders" | "alerts">;

/**
 * Hands back labels the order no longer wants, each with its `shipment-voided` entry under the key
 * `entryKey` names, and tells ops of any the carrier will not take back (flagged, one alert each).
 * One place for both paths that undo a bought label after the fact (decision 0170): the booking
 * step whose record was refused, and the cancel's cleanup of labels kept for a re-drive.
 * Returns how many the carrier took back.
 */
export async function handBackLabels(
  deps: HandBackDeps,
  input: {
    orderId: string;
    runId: string;
    parcels: readonly ShipmentNotice[];
    entryKey: (parcel: ShipmentNotice) => string;
    /** Added to each `shipment-voided` entry's detail. */
    detail?: Record<string, string>;
    /** Why the order is flagged when a label cannot be handed back. */
    flagReason: string;
  },
): Promise<number> {
  const { orderId, runId, parcels } = input;
  let handedBack = 0;
  for (const parcel of parcels) {
    const voided = await deps.shipments.voidWithCarrier(orderId, parcel);
    await deps.timeline.record(
      orderId,
      "shipment-voided",
      { ...parcel, outcome: voided, ...input.detail },
      input.entryKey(parcel),
    );
    if (voided !== "not-voidable") {
      handedBack += 1;
      continue;
    }
    await deps.orders.flagForOps(orderId, input.flagReason);
    await deps.alerts.notify({
      // By the label: the booking step's retry, and the cleanup's run, say it once.
      key: labelAlertKey("not-voidable", parcel.trackingNumber),
      title: "Parcel booked for a cancelled order",
      runId,
      fields: { orderId, trackingNumber: parcel.trackingNumber, action: "Stop the parcel with the carrier" },
    });
  }
  return handedBack;
}
