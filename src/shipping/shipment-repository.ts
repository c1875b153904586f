import type { CarrierBooking, LabelRefundStatus, ParcelKey } from "./shipping-provider";

/** What a parcel holds. */
export interface ParcelLine {
  sku: string;
  quantity: number;
}

/** One parcel's booking, as the workflow hands it over to be recorded. */
export interface ParcelBooking extends CarrierBooking {
  parcelNumber: number;
  lines: readonly ParcelLine[];
}

export interface ShipmentRecord extends CarrierBooking, ParcelKey {
  id: string;
  orderId: string;
  lines: ParcelLine[];
  /** Set once a re-ship replaced this label: it no longer counts for the order's delivery. */
  supersededAt: Date | null;
  trackerStatus: string | null;
  /** The label handed back to the carrier, and what the carrier said last. */
  labelRefundStatus: LabelRefundStatus | null;
  status: "booked" | "delivered";
  deliveredAt: Date | null;
}

export type ShipmentRef = { trackingNumber: string } | { shipmentId: string };

export type DeliveryOutcome =
  | { outcome: "delivered"; shipment: ShipmentRecord }
  | { outcome: "already-delivered"; shipment: ShipmentRecord }
  | { outcome: "not-found" };

/** Where an order's delivery stands: delivered once every current parcel is. */
export interface OrderDelivery {
  parcels: number;
  delivered: number;
  /** The last parcel's delivery, once all are delivered; null before. */
  deliveredAt: Date | null;
  /** The tracking number of the parcel delivered last (null before all are). */
  lastTrackingNumber: string | null;
}

/** The parcels still in play: each parcel's latest label (a re-ship supersedes the one before). */
export const currentParcels = <T extends { supersededAt: Date | null }>(records: readonly T[]): T[] =>
  records.filter((record) => record.supersededAt === null);

/**
 * The shipments table: one row per label, an order's parcels 1..n (each unique per order and
 * re-ship generation), the durable record of each booking.
 */
export interface ShipmentRepository {
  /**
   * Records a parcel's booking, or returns the one already recorded for that parcel and
   * generation (the first booking wins), so recording twice after a retried step leaves one row.
   */
  recordBooked(
    orderId: string,
    booking: CarrierBooking,
    parcel?: ParcelKey & { lines?: readonly ParcelLine[] },
  ): Promise<ShipmentRecord>;
  /** Every label of the order, superseded ones included, by parcel number then generation. */
  listByOrder(orderId: string): Promise<ShipmentRecord[]>;
  findById(shipmentId: string): Promise<ShipmentRecord | null>;
  findByTrackingNumber(trackingNumber: string): Promise<ShipmentRecord | null>;
  /** The carrier's latest tracker status, for the admin view (delivery itself goes through markDelivered). */
  recordTrackerStatus(trackingNumber: string, status: string): Promise<ShipmentRecord | null>;
  /**
   * Records where a label's refund stands; the first request sets `label_refund_requested_at`.
   * Returns the status recorded before, so a caller tells a change from a repeat.
   */
  recordLabelRefund(shipmentId: string, status: LabelRefundStatus): Promise<LabelRefundStatus | null>;
  /**
   * A track-label-refund run took up the order's submitted label refunds: each not marked yet gets
   * `label_refund_tracked_at`. Returns how many it marked (0 on a repeat).
   */
  markLabelRefundsTracked(orderId: string): Promise<number>;
  /**
   * Submitted label refunds no run took up, asked before `before` (their event lost): oldest first,
   * at most `limit`.
   */
  untrackedLabelRefunds(before: Date, limit: number): Promise<ShipmentRecord[]>;
  /** booked → delivered once; a repeat reports the delivery already recorded and changes nothing. */
  markDelivered(ref: ShipmentRef, at: Date): Promise<DeliveryOutcome>;
  /** How many of the order's current parcels are delivered, and when the last one was. */
  deliveryOf(orderId: string): Promise<OrderDelivery>;
  /**
   * Takes the re-ship lease of a current, undelivered label (false: another re-ship of it is in
   * progress, younger than `leaseMs`). A crashed re-ship's lease expires; its carrier booking is
   * found again by reference.
   */
  startReship(shipmentId: string, leaseMs: number): Promise<boolean>;
  /** Gives the lease back (the re-ship failed before its record): the next request may go at once. */
  releaseReship(shipmentId: string): Promise<void>;
  /**
   * The re-ship's record, in one transaction: the old label superseded and the new one recorded
   * as the same parcel at the next generation. Repeated, it returns the label recorded first.
   */
  /**
   * The re-ship's new label recorded, fenced after the carrier call (decision 0170): under the
   * order's row lock, only while the order is still `shipped` with no cancel asked; null when it is
   * not (the caller hands the label back). A cancel asked after it lands sees the new label.
   */
  recordReship(old: ShipmentRecord, booking: CarrierBooking): Promise<ShipmentRecord | null>;
}
