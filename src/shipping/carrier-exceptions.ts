import type { Alerter } from "../alerts";
import type { Timeline } from "../timeline/timeline";
import type { ShipmentRecord } from "./shipment-repository";

/** Tracker statuses that are neither on the way nor delivered: the parcel needs someone. */
export const carrierExceptionStatuses = [
  "return_to_sender",
  "failure",
  "error",
  "available_for_pickup",
  "cancelled",
] as const;
export type CarrierExceptionStatus = (typeof carrierExceptionStatuses)[number];

export function isCarrierException(status: string): status is CarrierExceptionStatus {
  return (carrierExceptionStatuses as readonly string[]).includes(status);
}

/** What ops read on the order and in the alert, and whether the customer must act or wait. */
const handling: Record<
  CarrierExceptionStatus,
  { flag: string; action: string; customer: "available_for_pickup" | "failure" | "return_to_sender" | null }
> = {
  available_for_pickup: {
    flag: "the carrier holds the parcel for pickup",
    action: "The customer was asked to pick it up; nothing to do unless it comes back",
    customer: "available_for_pickup",
  },
  failure: {
    flag: "a delivery attempt failed",
    action: "Watch the carrier's next attempt (the customer was told); if it fails again, call the customer",
    customer: "failure",
  },
  return_to_sender: {
    flag: "the parcel is being returned to sender",
    action: "Once it is back: re-ship it or refund the order (the customer was told)",
    customer: "return_to_sender",
  },
  error: {
    flag: "the carrier reports a tracking error",
    action: "Check the parcel with the carrier",
    customer: null,
  },
  cancelled: {
    flag: "the carrier cancelled the shipment",
    action: "Buy a new label with the carrier or refund the order",
    customer: null,
  },
};

/**
 * A tracker status other than on-the-way and delivered: the order is flagged for ops with what
 * happened, ops get one alert (the caller acts only when the status changes, so a repeated event
 * alerts nobody twice), and where the customer must act or wait they get one e-mail (keyed by the
 * status and order).
 */
export function createCarrierExceptions(deps: {
  flagForOps: (orderId: string, reason: string) => Promise<void>;
  timeline: Pick<Timeline, "record">;
  alerts: Pick<Alerter, "notify">;
  tellCustomer: (
    orderId: string,
    exception: {
      kind: "available_for_pickup" | "failure" | "return_to_sender";
      trackingNumber: string;
      carrierMessage?: string;
      parcel?: { parcelNumber: number; generation: number };
    },
  ) => Promise<unknown>;
}) {
  return {
    async handle(shipment: ShipmentRecord, status: CarrierExceptionStatus, carrierMessage?: string) {
      const how = handling[status];
      const { orderId, trackingNumber } = shipment;
      await deps.flagForOps(orderId, `carrier: ${how.flag}`);
      await deps.timeline.record(orderId, "carrier-exception", {
        status,
        trackingNumber,
        parcelNumber: shipment.parcelNumber,
        ...(carrierMessage ? { message: carrierMessage } : {}),
      });
      await deps.alerts.notify({
        title: `Parcel exception: ${status.replaceAll("_", " ")}`,
        fields: { orderId, trackingNumber, carrier: shipment.carrier, status, action: how.action },
      });
      if (how.customer) {
        await deps.tellCustomer(orderId, {
          kind: how.customer,
          trackingNumber,
          // Each parcel in trouble is its own e-mail (the key says which).
          parcel: { parcelNumber: shipment.parcelNumber, generation: shipment.generation },
          ...(carrierMessage ? { carrierMessage } : {}),
        });
      }
    },
  };
}

export type CarrierExceptions = ReturnType<typeof createCarrierExceptions>;
