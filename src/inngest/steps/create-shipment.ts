import type { GuardRefusal } from "../../orders/fulfilment-records";
import type { ShipmentNotice } from "../../notifications/customer-messages";
import type { Claim } from "./context";
import { createStep } from "./saga";

export const createShipmentStepId = "create-shipment";

export type ShipmentOutcome =
  /** `booking` is null for a digital-only order: nothing to ship, the order is delivered. */
  { shipped: true; booking: ShipmentNotice | null } | { shipped: false; stopped: GuardRefusal };

/**
 * Books the parcel with the carrier, then records the booking and moves the order to `shipped`
 * under the fulfilment guard: the point of no return, after which a cancel is refused. A booking
 * that comes back after a cancel is voided with the carrier, or, if the carrier cannot void it,
 * ops are alerted to stop the parcel. Idempotent by the order id (carrier and shipments row). No
 * undo: from here a failure is for ops (and a re-drive), not a compensation.
 */
export const createShipment = createStep({
  id: createShipmentStepId,
  invoke: ({ step, deps, orderId, runId }, claim: Claim) =>
    step.run(createShipmentStepId, async (): Promise<ShipmentOutcome> => {
      const booking = await deps.shipments.bookWithCarrier({ orderId, lines: claim.lines });
      const recorded = await deps.fulfilment.recordShipment({
        orderId,
        claimId: claim.claimId,
        runId,
        booking,
      });
      // What the workflow keeps (step output, e-mail): the customer's view, not the label.
      const notice = booking && {
        carrier: booking.carrier,
        trackingNumber: booking.trackingNumber,
        trackingUrl: booking.trackingUrl,
      };
      if (recorded.landed) return { shipped: true, booking: notice };
      if (recorded.reason === "cancelled" && booking) {
        const voided = await deps.shipments.voidWithCarrier(orderId, booking);
        await deps.timeline.record(orderId, "shipment-voided", { ...booking, outcome: voided }, runId);
        if (voided === "not-voidable") {
          await deps.orders.flagForOps(orderId, "a parcel was booked after the order was cancelled");
          await deps.alerts.notify({
            title: "Parcel booked for a cancelled order",
            runId,
            fields: {
              orderId,
              trackingNumber: booking.trackingNumber,
              action: "Stop the parcel with the carrier",
            },
          });
        }
      }
      return { shipped: false, stopped: recorded.reason };
    }),
});
