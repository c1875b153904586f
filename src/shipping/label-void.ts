import type { Alerter } from "../alerts";
import { labelRefundRequestedEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { Timeline } from "../timeline/timeline";
import { currentParcels, type ShipmentRecord, type ShipmentRepository } from "./shipment-repository";
import type { LabelRefundStatus, ShippingProvider, VoidOutcome } from "./shipping-provider";

/** Tracker statuses of a label the carrier has not scanned yet (EasyPost's "label created"). */
const unscannedStatuses: readonly (string | null)[] = [null, "unknown", "pre_transit"];

/** Why the label is handed back: the order was cancelled or refunded in full, or the parcel re-shipped. */
export type VoidCause = "cancelled" | "refunded" | "reshipped";

export type LabelVoidOutcome =
  /** No label was bought for the order (digital-only, or not booked yet). */
  | { outcome: "no-label" }
  /**
   * The carrier took the label(s) back (`submitted` moves to `refunded` or `rejected` later;
   * `not_applicable`: billed on scan, an unscanned label costs nothing).
   */
  | { outcome: "requested"; status: "submitted" | "refunded" | "not_applicable" }
  /** Not all voided: a parcel is moving, or the carrier refused; ops were told what to do. */
  | { outcome: "needs-ops"; why: "scanned" | "rejected" | "not-voidable" };

type OneOutcome = Exclude<LabelVoidOutcome, { outcome: "no-label" }>;

/**
 * The run id a parcel's timeline entries are written under: the timeline keeps one entry per
 * order, kind and run, and one run may void or follow several parcels. Parcel 1's first label
 * keeps the run's own id, as every entry had before orders had several parcels.
 */
export const parcelEntryRunId = (runId: string | undefined, shipment: ShipmentRecord): string | undefined =>
  runId === undefined || (shipment.parcelNumber === 1 && shipment.generation === 0)
    ? runId
    : `${runId}/parcel-${shipment.parcelNumber}-${shipment.generation}`;

/**
 * The alert's key for a label ops must see to: by what went wrong and the label's tracking number,
 * so a retry, or another run handing back the same label, says it once (never a run id, a count
 * or the carrier's latest words).
 */
export const labelAlertKey = (why: "scanned" | "rejected" | "not-voidable", trackingNumber: string) =>
  `label-${why}-${trackingNumber}`;

const isVoidable = (shipment: ShipmentRecord): boolean =>
  shipment.status === "booked" &&
  shipment.labelRefundStatus === null &&
  unscannedStatuses.includes(shipment.trackerStatus);

/**
 * Hands bought labels back to the carrier when their parcels will not ship (a cancel, a full
 * refund: every parcel of the order; a re-ship: the replaced label), and follows each refund
 * until the carrier decides. A label the carrier has scanned is not asked for (it would be
 * rejected): ops are told to intercept the parcel or have it returned to sender. Every step is
 * idempotent: each shipment row keeps its refund's status, and EasyPost itself answers a repeated
 * request with the same status.
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
    shipment: ShipmentRecord,
    why: "scanned" | "rejected" | "not-voidable",
    cause: VoidCause,
    runId?: string,
  ) => {
    const { orderId } = shipment;
    const detail = {
      trackingNumber: shipment.trackingNumber,
      trackerStatus: shipment.trackerStatus,
      parcelNumber: shipment.parcelNumber,
    };
    const causeText = cause === "reshipped" ? "re-shipped" : cause;
    const reason =
      why === "scanned"
        ? `${causeText} after the carrier scanned the parcel`
        : `the carrier refused to refund the label of a ${causeText} ${cause === "reshipped" ? "parcel" : "order"}`;
    await flagForOps(orderId, reason);
    await timeline.record(
      orderId,
      why === "scanned" ? "label-not-voided" : "label-refund-rejected",
      { cause, why, ...detail },
      parcelEntryRunId(runId, shipment),
    );
    // Keyed by the label and what went wrong with it: a retried void, or the refund's later
    // rejection found twice, says it once.
    await alerts.notify({
      key: labelAlertKey(why, shipment.trackingNumber),
      title:
        why === "scanned"
          ? `Parcel ${causeText} after it was scanned`
          : `Label refund refused for a ${causeText} ${cause === "reshipped" ? "parcel" : "order"}`,
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

  /** One label: asked back of the carrier, or (scanned) ops told. */
  const voidOne = async (shipment: ShipmentRecord, cause: VoidCause, runId?: string): Promise<OneOutcome> => {
    if (
      shipment.labelRefundStatus === "submitted" ||
      shipment.labelRefundStatus === "refunded" ||
      shipment.labelRefundStatus === "not_applicable"
    ) {
      return { outcome: "requested", status: shipment.labelRefundStatus };
    }
    if (shipment.status === "delivered" || !unscannedStatuses.includes(shipment.trackerStatus)) {
      await tellOps(shipment, "scanned", cause, runId);
      return { outcome: "needs-ops", why: "scanned" };
    }
    const answer: VoidOutcome = provider.voidShipment
      ? await provider.voidShipment(shipment.orderId, shipment.trackingNumber, shipment)
      : "not-voidable";
    // A carrier that voids at once says "voided"; EasyPost answers with its refund's status.
    const status: LabelRefundStatus | null =
      answer === "voided" || answer === "already-voided"
        ? "refunded"
        : answer === "submitted" ||
            answer === "refunded" ||
            answer === "rejected" ||
            answer === "not_applicable"
          ? answer
          : null;
    if (status === null || status === "rejected") {
      if (status) await shipments.recordLabelRefund(shipment.id, status);
      const why = status === "rejected" ? "rejected" : "not-voidable";
      await tellOps(shipment, why, cause, runId);
      return { outcome: "needs-ops", why };
    }
    await shipments.recordLabelRefund(shipment.id, status);
    const detail = {
      cause,
      status,
      trackingNumber: shipment.trackingNumber,
      trackerStatus: shipment.trackerStatus,
      parcelNumber: shipment.parcelNumber,
    };
    const entryRunId = parcelEntryRunId(runId, shipment);
    await timeline.record(shipment.orderId, "label-refund-requested", detail, entryRunId);
    if (status === "refunded") {
      await timeline.record(
        shipment.orderId,
        "label-refunded",
        { trackingNumber: shipment.trackingNumber, parcelNumber: shipment.parcelNumber },
        entryRunId,
      );
    } else if (status === "submitted") {
      await publisher.publish(
        labelRefundRequestedEvent(
          { orderId: shipment.orderId },
          cause === "reshipped" ? shipment.id : undefined,
        ),
      );
    }
    return { outcome: "requested", status };
  };

  return {
    /** Whether every parcel's label could still be handed back (bought, not scanned, not voided). */
    async voidable(orderId: string): Promise<boolean> {
      const parcels = currentParcels(await shipments.listByOrder(orderId));
      return parcels.length > 0 && parcels.every(isVoidable);
    },

    /**
     * Every current parcel's label: each unscanned one asked back, each scanned one to ops. The
     * order's outcome is `requested` only when every parcel's is.
     */
    async voidLabel(orderId: string, cause: VoidCause, runId?: string): Promise<LabelVoidOutcome> {
      const parcels = currentParcels(await shipments.listByOrder(orderId));
      if (parcels.length === 0) return { outcome: "no-label" };
      const outcomes: OneOutcome[] = [];
      for (const parcel of parcels) outcomes.push(await voidOne(parcel, cause, runId));
      const needsOps = outcomes.find((outcome) => outcome.outcome === "needs-ops");
      if (needsOps) return needsOps;
      const statuses = new Set(outcomes.map((outcome) => outcome.outcome === "requested" && outcome.status));
      // Billed on scan and unscanned costs nothing, as a refunded label does: refunded unless every
      // label was of that kind.
      const status = statuses.has("submitted")
        ? "submitted"
        : statuses.has("refunded")
          ? "refunded"
          : "not_applicable";
      return { outcome: "requested", status };
    },

    /** One label, by its shipment (a re-ship hands back the label it replaces). */
    voidShipment: (shipment: ShipmentRecord, cause: VoidCause, runId?: string) =>
      voidOne(shipment, cause, runId),

    /** Whether one label could still be handed back. */
    isVoidable,

    /** A track-label-refund run took up the order's submitted refunds (its first step). */
    trackingStarted: (orderId: string): Promise<number> => shipments.markLabelRefundsTracked(orderId),

    /**
     * Labels handed back whose tracking run never started (a crash between recording the refund
     * and the publish), asked before `before`, each with the event the lost publish would have
     * sent: the same id, so a publish that was only late and the sweep start one run.
     */
    async untrackedRefunds(before: Date, limit: number) {
      const untracked = await shipments.untrackedLabelRefunds(before, limit);
      return untracked.map((shipment) => ({
        orderId: shipment.orderId,
        shipmentId: shipment.id,
        trackingNumber: shipment.trackingNumber,
        parcelNumber: shipment.parcelNumber,
        // A superseded label was handed back by its re-ship, whose event names the label.
        event: labelRefundRequestedEvent(
          { orderId: shipment.orderId },
          shipment.supersededAt ? shipment.id : undefined,
        ),
      }));
    },

    /**
     * A label bought but never recorded, because the order no longer wanted it when the answer
     * came (decision 0170: fenced after the fact): asked back of the carrier by its reference, the
     * timeline told; where the carrier will not take it back, ops are told to stop the parcel.
     */
    async handBackUnrecorded(
      label: {
        orderId: string;
        trackingNumber: string;
        carrier: string;
        parcelNumber: number;
        generation: number;
      },
      cause: VoidCause,
      entryKey: string,
    ): Promise<"requested" | "needs-ops"> {
      const { orderId, trackingNumber, parcelNumber, generation } = label;
      const answer: VoidOutcome = provider.voidShipment
        ? await provider.voidShipment(orderId, trackingNumber, { parcelNumber, generation })
        : "not-voidable";
      // not_applicable: billed on scan, an unscanned label costs nothing.
      const handedBack = ["voided", "already-voided", "submitted", "refunded", "not_applicable"].includes(
        answer,
      );
      await timeline.record(
        orderId,
        "shipment-voided",
        { trackingNumber, carrier: label.carrier, parcelNumber, generation, cause, outcome: answer },
        entryKey,
      );
      if (handedBack) return "requested";
      const causeText = cause === "reshipped" ? "re-shipped" : cause;
      await flagForOps(orderId, `a label bought for a ${causeText} order could not be handed back`);
      await alerts.notify({
        key: labelAlertKey("not-voidable", trackingNumber),
        title: "Label bought for an order that no longer wants it",
        fields: {
          orderId,
          trackingNumber,
          carrierAnswer: answer,
          action: "Stop the parcel with the carrier, or claim the label refund by hand",
        },
      });
      return "needs-ops";
    },

    /**
     * Asks the carrier where each submitted refund of the order stands and records a change:
     * `refunded` on the timeline, `rejected` to ops. Returns `submitted` while any is undecided,
     * else `rejected` if any was, else `refunded` (null: nothing was submitted).
     */
    async checkRefund(orderId: string, runId?: string): Promise<LabelRefundStatus | null> {
      const asked = (await shipments.listByOrder(orderId)).filter((shipment) => shipment.labelRefundStatus);
      if (asked.length === 0) return null;
      // A label submitted after this run's first step (another parcel's void) is followed here
      // too: marked, so the sweep does not take it for one whose event was lost.
      await shipments.markLabelRefundsTracked(orderId);
      const statuses: LabelRefundStatus[] = [];
      for (const shipment of asked) {
        if (shipment.labelRefundStatus !== "submitted") {
          statuses.push(shipment.labelRefundStatus ?? "submitted");
          continue;
        }
        const now = provider.labelRefundStatus ? await provider.labelRefundStatus(orderId, shipment) : null;
        if (now === null || now === "submitted") {
          statuses.push("submitted");
          continue;
        }
        statuses.push(now);
        const before = await shipments.recordLabelRefund(shipment.id, now);
        if (before === now) continue;
        if (now === "refunded") {
          await timeline.record(
            orderId,
            "label-refunded",
            { trackingNumber: shipment.trackingNumber, parcelNumber: shipment.parcelNumber },
            parcelEntryRunId(runId, shipment),
          );
        } else {
          // A superseded label was handed back by a re-ship; any other by a cancel or a full refund.
          await tellOps(shipment, "rejected", shipment.supersededAt ? "reshipped" : "cancelled", runId);
        }
      }
      if (statuses.includes("submitted")) return "submitted";
      return statuses.includes("rejected") ? "rejected" : "refunded";
    },
  };
}

export type LabelVoids = ReturnType<typeof createLabelVoids>;
