import type { Database } from "../db/client";
import { AppError } from "../errors";
import type { CustomerMessages } from "../notifications/customer-messages";
import type { LabelVoids } from "../shipping/label-void";
import type { ShipmentRecord, ShipmentRepository } from "../shipping/shipment-repository";
import type { ShippingDestinations } from "../shipping/shipment-booking";
import { parseStoredAddress } from "../shipping/shipping-destinations";
import type { ShippingProvider } from "../shipping/shipping-provider";
import type { Timeline } from "../timeline/timeline";
import type { Actor } from "./actor";
import { reshipMayLand } from "../shared/order-model";
import { checkAction, type OrderFactsReader } from "./model-check";

export interface ReshipRequest {
  orderId: string;
  /** The parcel's label to replace (a shipments row id). */
  shipmentId: string;
  by: Actor;
}

export interface ReshipResult {
  orderId: string;
  status: "reshipped";
  parcelNumber: number;
  /** The new label's shipment, and the one it replaced. */
  shipmentId: string;
  replacedShipmentId: string;
  carrier: string;
  trackingNumber: string;
  trackingUrl: string;
  /** What became of the old label: handed back (`requested`), or ops told (`needs-ops`). */
  oldLabel: "requested" | "needs-ops" | "already-handled";
  email: string;
  /** True when this repeated a re-ship already made: nothing new was bought. */
  repeated: boolean;
}

/** How long a re-ship in progress keeps a second request of the same parcel out. */
export const reshipLeaseMs = 2 * 60 * 1000;

export interface ReshipDeps {
  db: Database;
  shipments: ShipmentRepository;
  provider: ShippingProvider;
  destinations: ShippingDestinations;
  labels: Pick<LabelVoids, "voidShipment" | "isVoidable" | "handBackUnrecorded">;
  messages: Pick<CustomerMessages, "reshipped">;
  timeline: Pick<Timeline, "record">;
  /** The order model's facts (model-check.ts): the model decides whether the order may re-ship. */
  facts: OrderFactsReader;
}

/**
 * Re-ships one parcel of a shipped order (returned to sender, lost, cancelled by the carrier): a
 * new label for the same parcel and contents, to the order's address as recorded now (a corrected
 * address included), the old label handed back (a scanned one goes to ops), a timeline entry and
 * one new tracking e-mail.
 *
 * Idempotent by the replaced shipment: its re-ship is the same parcel at the next generation
 * (carrier reference `order-<id>-<n>-reship-<g>`, and the row unique per order, parcel and
 * generation), so a repeated request returns the re-ship already made and buys nothing; the
 * e-mail's key is the new shipment's id, the timeline entry's the same. Two requests at once: one
 * takes the parcel's lease, the other is refused (409 reship_in_progress) and changes nothing.
 *
 * From then on the parcel counts for "all parcels delivered" by its new label only (the old
 * one's tracker is still recorded, but a parcel on its way back to us is not the customer's
 * delivery).
 */
export async function reshipParcel(deps: ReshipDeps, request: ReshipRequest): Promise<ReshipResult> {
  const { orderId, shipmentId, by } = request;
  const order = await deps.db.order.findUnique({
    where: { id: orderId },
    select: { status: true, shippingAddress: true },
  });
  if (!order) throw new AppError("order_not_found", `Order ${orderId} does not exist`);
  const old = await deps.shipments.findById(shipmentId);
  if (!old || old.orderId !== orderId) {
    throw new AppError("shipment_not_found", `Order ${orderId} has no shipment ${shipmentId}`);
  }
  if (old.supersededAt) {
    const labels = await deps.shipments.listByOrder(orderId);
    const next = labels.find(
      (label) => label.parcelNumber === old.parcelNumber && label.generation === old.generation + 1,
    );
    if (next) return finish(deps, old, next, by, true);
  }
  // The order model first (decision 0170): shipped, no cancel asked, a parcel not delivered.
  // recordReship's statement is the fence after the carrier call.
  await checkAction(deps.facts, orderId, "reship");
  // The model's parcel part, for this parcel.
  if (old.status === "delivered") {
    throw new AppError(
      "parcel_delivered",
      `Parcel ${old.parcelNumber} of order ${orderId} was delivered: nothing to re-ship (a return is another action)`,
    );
  }
  if (!(await deps.shipments.startReship(old.id, reshipLeaseMs))) {
    throw new AppError(
      "reship_in_progress",
      `Parcel ${old.parcelNumber} of order ${orderId} is being re-shipped already; look again in a moment`,
    );
  }
  let next: ShipmentRecord;
  try {
    const destination = await deps.destinations.find(orderId);
    const address = parseStoredAddress(order.shippingAddress) ?? destination?.address ?? null;
    if (!address) {
      throw new AppError("order_not_shipped", `Order ${orderId} has no shipping address to re-ship to`);
    }
    const weights = destination?.weightsOz ?? {};
    const booking = await deps.provider.createShipment({
      orderId,
      parcel: { parcelNumber: old.parcelNumber, generation: old.generation + 1 },
      address,
      lines: old.lines.map((line) => ({ ...line, weightOz: weights[line.sku] ?? null })),
    });
    const recorded = await deps.shipments.recordReship(old, booking);
    if (!recorded) {
      // Cancelled (or ended) while the label was bought: the new label is handed back now, the
      // old one is the cancel's to hand back (decision 0170).
      const current = await deps.db.order.findUnique({ where: { id: orderId }, select: { status: true } });
      const handed = await deps.labels.handBackUnrecorded(
        {
          orderId,
          trackingNumber: booking.trackingNumber,
          carrier: booking.carrier,
          parcelNumber: old.parcelNumber,
          generation: old.generation + 1,
        },
        "cancelled",
        `reship-void-${old.id}`,
      );
      throw new AppError(
        "order_not_shipped",
        `Order ${orderId} is ${current?.status ?? "gone"}: it was cancelled while the new label was bought; ` +
          (handed === "requested"
            ? `that label (${booking.trackingNumber}) was handed back to the carrier`
            : `the carrier would not take that label (${booking.trackingNumber}) back: ops were told`),
      );
    }
    next = recorded;
  } catch (error) {
    // Asking again may go at once; a label the carrier sold meanwhile is found by its reference.
    await deps.shipments.releaseReship(old.id);
    throw error;
  }
  return finish(deps, old, next, by, false);
}

/** The re-ship's records, each idempotent: run again by a repeated request, it adds nothing. */
async function finish(
  deps: ReshipDeps,
  old: ShipmentRecord,
  next: ShipmentRecord,
  by: Actor,
  repeated: boolean,
): Promise<ReshipResult> {
  const { orderId } = old;
  // The re-ship's own key stands in for a run id: one entry per re-ship however often it is asked.
  const entryKey = `reship-${next.id}`;
  // A repeat hands the old label back only if it still can be: the first request already told
  // ops about a scanned one.
  let oldLabel: ReshipResult["oldLabel"] = "already-handled";
  if (!repeated || deps.labels.isVoidable(old)) {
    const voided = await deps.labels.voidShipment(old, "reshipped", entryKey);
    oldLabel = voided.outcome;
  }
  await deps.timeline.record(
    orderId,
    "parcel-reshipped",
    {
      parcelNumber: old.parcelNumber,
      generation: next.generation,
      by,
      oldTrackingNumber: old.trackingNumber,
      trackingNumber: next.trackingNumber,
      carrier: next.carrier,
      oldLabel,
    },
    entryKey,
  );
  // A cancel that landed after the record: its cleanup hands this label back; no "shipped"
  // e-mail after the "cancelled" one.
  const now = await deps.db.order.findUnique({
    where: { id: orderId },
    select: { status: true, cancelRequestedAt: true },
  });
  if (!now || !reshipMayLand({ status: now.status, cancelRequested: now.cancelRequestedAt !== null })) {
    throw new AppError(
      "order_not_shipped",
      `Order ${orderId} is ${now?.status ?? "gone"}: it was cancelled as the parcel was re-shipped; its labels are handed back`,
    );
  }
  const email = await deps.messages.reshipped(orderId, next.id, {
    carrier: next.carrier,
    trackingNumber: next.trackingNumber,
    trackingUrl: next.trackingUrl,
    parcelNumber: next.parcelNumber,
  });
  return {
    orderId,
    status: "reshipped",
    parcelNumber: next.parcelNumber,
    shipmentId: next.id,
    replacedShipmentId: old.id,
    carrier: next.carrier,
    trackingNumber: next.trackingNumber,
    trackingUrl: next.trackingUrl,
    oldLabel,
    email: email.status,
    repeated,
  };
}
