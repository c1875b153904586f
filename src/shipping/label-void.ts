import type { Alerter } from "../alerts";
import { labelRefundRequestedEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { Timeline } from "../timeline/timeline";
import type { ShipmentRepository } from "./shipment-repository";
import type { LabelRefundStatus, ShippingProvider, VoidOutcome } from "./shipping-provider";

/** Tracker statuses of a label the carrier has not scanned yet (EasyPost's "label created"). */
const unscannedStatuses: readonly (string | null)[] = [null, "unknown", "pre_transit"];

/** Why the label is handed back: the order was cancelled, or refunded in full. */
export type VoidCause = "cancelled" | "refunded";

export type LabelVoidOutcome =
  /** No label was bought for the order (digital-only, or not booked yet). */
  | { outcome: "no-label" }
  /** The carrier took the label back (`submitted` moves to `refunded` or `rejected` later). */
  | { outcome: "requested"; status: "submitted" | "refunded" }
  /** Nothing voided: the parcel is moving, or the carrier refused; ops were told what to do. */
  | { outcome: "needs-ops"; why: "scanned" | "rejected" | "not-voidable" };

/**
 * Hands a bought label back to the carrier when its order will not ship (a cancel, a full refund),
 * and follows the refund until the carrier decides. A label the carrier has scanned is not asked
 * for (it would be rejected): ops are told to intercept the parcel or have it returned to sender.
 * Every step is idempotent: the shipment row keeps the refund's status, and EasyPost itself
 * answers a repeated request with the same status.
 */
export function createLabelVoids(deps: {
  provider: ShippingProvider;
  shipments: ShipmentRepository;
  timeline: Pick<Timeline, "record">;
  alerts: Pick<Alerter, "notify">;
  publisher: EventPublisher;
  /** Puts the order on the console's "needs attention" list. */
  flagForOps: (orderId: string, reason: string) => Promise<void>;
}) {
  const { provider, shipments, timeline, alerts, publisher, flagForOps } = deps;

  const tellOps = async (
    orderId: string,
    why: "scanned" | "rejected" | "not-voidable",
    cause: VoidCause,
    detail: { trackingNumber: string; trackerStatus: string | null },
    runId?: string,
  ) => {
    const reason =
      why === "scanned"
        ? `${cause === "cancelled" ? "cancelled" : "refunded"} after the carrier scanned the parcel`
        : `the carrier refused to refund the label of a ${cause} order`;
    await flagForOps(orderId, reason);
    await timeline.record(
      orderId,
      why === "scanned" ? "label-not-voided" : "label-refund-rejected",
      {
        cause,
        why,
        ...detail,
      },
      runId,
    );
    await alerts.notify({
      title:
        why === "scanned"
          ? `Order ${cause} after its parcel was scanned`
          : `Label refund refused for a ${cause} order`,
      ...(runId ? { runId } : {}),
      fields: {
        orderId,
        trackingNumber: detail.trackingNumber,
        trackerStatus: detail.trackerStatus ?? "unknown",
        action:
          why === "scanned"
            ? "Ask the carrier to intercept the parcel or return it to sender; the label cannot be refunded"
            : "Ask the carrier to intercept the parcel or return it to sender, or claim the label refund by hand",
      },
    });
  };

  return {
    /** Whether the order's label could still be handed back (bought, not scanned, not voided). */
    async voidable(orderId: string): Promise<boolean> {
      const shipment = await shipments.findByOrderId(orderId);
      return (
        shipment !== null &&
        shipment.status === "booked" &&
        shipment.labelRefundStatus === null &&
        unscannedStatuses.includes(shipment.trackerStatus)
      );
    },

    async voidLabel(orderId: string, cause: VoidCause, runId?: string): Promise<LabelVoidOutcome> {
      const shipment = await shipments.findByOrderId(orderId);
      if (!shipment) return { outcome: "no-label" };
      const detail = { trackingNumber: shipment.trackingNumber, trackerStatus: shipment.trackerStatus };
      if (shipment.labelRefundStatus === "submitted" || shipment.labelRefundStatus === "refunded") {
        return { outcome: "requested", status: shipment.labelRefundStatus };
      }
      if (shipment.status === "delivered" || !unscannedStatuses.includes(shipment.trackerStatus)) {
        await tellOps(orderId, "scanned", cause, detail, runId);
        return { outcome: "needs-ops", why: "scanned" };
      }
      const answer: VoidOutcome = provider.voidShipment
        ? await provider.voidShipment(orderId, shipment.trackingNumber)
        : "not-voidable";
      // A carrier that voids at once says "voided"; EasyPost answers with its refund's status.
      const status: LabelRefundStatus | null =
        answer === "voided" || answer === "already-voided"
          ? "refunded"
          : answer === "submitted" || answer === "refunded" || answer === "rejected"
            ? answer
            : null;
      if (status === null || status === "rejected") {
        if (status) await shipments.recordLabelRefund(orderId, status);
        const why = status === "rejected" ? "rejected" : "not-voidable";
        await tellOps(orderId, why, cause, detail, runId);
        return { outcome: "needs-ops", why };
      }
      await shipments.recordLabelRefund(orderId, status);
      await timeline.record(orderId, "label-refund-requested", { cause, status, ...detail }, runId);
      if (status === "refunded") {
        await timeline.record(orderId, "label-refunded", { trackingNumber: shipment.trackingNumber }, runId);
      } else {
        await publisher.publish(labelRefundRequestedEvent({ orderId }));
      }
      return { outcome: "requested", status };
    },

    /**
     * Asks the carrier where a submitted refund stands and records a change: `refunded` on the
     * timeline, `rejected` to ops. Returns the status now (null: nothing was submitted).
     */
    async checkRefund(orderId: string, runId?: string): Promise<LabelRefundStatus | null> {
      const shipment = await shipments.findByOrderId(orderId);
      if (!shipment?.labelRefundStatus) return null;
      if (shipment.labelRefundStatus !== "submitted") return shipment.labelRefundStatus;
      const now = provider.labelRefundStatus ? await provider.labelRefundStatus(orderId) : null;
      if (now === null || now === "submitted") return "submitted";
      const before = await shipments.recordLabelRefund(orderId, now);
      if (before === now) return now;
      const detail = { trackingNumber: shipment.trackingNumber, trackerStatus: shipment.trackerStatus };
      if (now === "refunded") {
        await timeline.record(orderId, "label-refunded", { trackingNumber: shipment.trackingNumber }, runId);
      } else {
        await tellOps(orderId, "rejected", "cancelled", detail, runId);
      }
      return now;
    },
  };
}

export type LabelVoids = ReturnType<typeof createLabelVoids>;
