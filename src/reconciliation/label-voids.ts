import type { Database } from "../db/client";
import { easyPostReference } from "../shipping/easypost-carrier";
import type { ShopDay } from "./shop-day";

/** A label we handed back to the carrier: by which path, and how to ask the carrier about it. */
export interface LabelVoid {
  orderId: string;
  trackingNumber: string;
  /** The carrier's id of the label when we kept it, else its reference (`order-…`, `return-…`). */
  lookup: string;
  /** The path that handed it back (the timeline kind that says so). */
  via: string;
  /** The refund's status as our records have it (null: not recorded). */
  ourStatus: string | null;
}

/**
 * The timeline entries that say a label was handed back, whichever path did it: the run's own
 * void of a parcel booked after a cancel (`shipment-voided`, src/inngest/steps/create-shipment.ts),
 * a cancel, a full refund or a re-ship (`label-refund-requested`, src/shipping/label-void.ts), a
 * refund the carrier refused then or later (`label-refund-rejected`), and a return label handed
 * back when the return was rejected, closed or expired (`return-label-refund-requested`).
 */
const voidKinds = [
  "shipment-voided",
  "label-refund-requested",
  "label-refund-rejected",
  "return-label-refund-requested",
] as const;

/** Every label handed back in the day, by tracking number (the latest path that spoke of it wins). */
export async function labelVoidsOfDay(db: Database, day: ShopDay): Promise<Map<string, LabelVoid>> {
  const entries = await db.orderTimelineEntry.findMany({
    where: { kind: { in: [...voidKinds] }, createdAt: { gte: day.start, lt: day.end } },
    orderBy: { createdAt: "asc" },
    select: { orderId: true, kind: true, detail: true },
  });
  const parcels: { orderId: string; trackingNumber: string; via: string; parcelNumber: number }[] = [];
  const returnIds = new Map<string, string>();
  for (const { orderId, kind, detail } of entries) {
    const fields = (detail ?? {}) as Record<string, unknown>;
    if (kind === "return-label-refund-requested") {
      if (typeof fields.returnId === "string" && fields.status !== "not-found")
        returnIds.set(fields.returnId, orderId);
      continue;
    }
    if (typeof fields.trackingNumber !== "string") continue;
    // The run's void of a parcel it booked too late: only a label the carrier took back counts.
    if (kind === "shipment-voided" && fields.outcome !== "voided" && fields.outcome !== "already-voided")
      continue;
    parcels.push({
      orderId,
      trackingNumber: fields.trackingNumber,
      via: kind,
      // Entries written before orders had several parcels name none: parcel 1.
      parcelNumber: typeof fields.parcelNumber === "number" ? fields.parcelNumber : 1,
    });
  }

  const voids = new Map<string, LabelVoid>();
  const shipments = await db.shipment.findMany({
    where: { trackingNumber: { in: parcels.map((parcel) => parcel.trackingNumber) } },
    select: { trackingNumber: true, providerId: true, labelRefundStatus: true },
  });
  const shipmentOf = new Map(shipments.map((shipment) => [shipment.trackingNumber, shipment]));
  for (const parcel of parcels) {
    const recorded = shipmentOf.get(parcel.trackingNumber);
    voids.set(parcel.trackingNumber, {
      orderId: parcel.orderId,
      trackingNumber: parcel.trackingNumber,
      // A parcel booked after a cancel and voided at once was never recorded: its reference.
      lookup:
        recorded?.providerId ??
        easyPostReference(parcel.orderId, { parcelNumber: parcel.parcelNumber, generation: 0 }),
      via: parcel.via,
      ourStatus: recorded?.labelRefundStatus ?? (parcel.via === "label-refund-rejected" ? "rejected" : null),
    });
  }

  const returns = await db.return.findMany({
    where: { id: { in: [...returnIds.keys()] }, labelTrackingNumber: { not: null } },
    select: {
      id: true,
      orderId: true,
      labelTrackingNumber: true,
      labelProviderId: true,
      labelRefundStatus: true,
    },
  });
  for (const row of returns) {
    const trackingNumber = row.labelTrackingNumber as string;
    voids.set(trackingNumber, {
      orderId: row.orderId,
      trackingNumber,
      lookup: row.labelProviderId ?? `return-${row.id}`,
      via: "return-label-refund-requested",
      ourStatus: row.labelRefundStatus,
    });
  }
  return voids;
}
