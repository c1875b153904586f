import type { CarrierBooking, LabelRefundStatus } from "./shipping-provider";

export interface ShipmentRecord extends CarrierBooking {
  orderId: string;
  trackerStatus: string | null;
  /** The label handed back to the carrier, and what the carrier said last. */
  labelRefundStatus: LabelRefundStatus | null;
  status: "booked" | "delivered";
  deliveredAt: Date | null;
}

export type ShipmentRef = { trackingNumber: string } | { orderId: string };

export type DeliveryOutcome =
  | { outcome: "delivered"; shipment: ShipmentRecord }
  | { outcome: "already-delivered"; shipment: ShipmentRecord }
  | { outcome: "not-found" };

/** The shipments table: one row per order (order_id is unique), the durable record of a booking. */
export interface ShipmentRepository {
  /**
   * Records the booking for the order, or returns the one already recorded (the first booking
   * wins), so recording twice after a retried step leaves one row.
   */
  recordBooked(orderId: string, booking: CarrierBooking): Promise<ShipmentRecord>;
  findByOrderId(orderId: string): Promise<ShipmentRecord | null>;
  findByTrackingNumber(trackingNumber: string): Promise<ShipmentRecord | null>;
  /** The carrier's latest tracker status, for the admin view (delivery itself goes through markDelivered). */
  recordTrackerStatus(trackingNumber: string, status: string): Promise<ShipmentRecord | null>;
  /**
   * Records where the label's refund stands; the first request sets `label_refund_requested_at`.
   * Returns the status recorded before, so a caller tells a change from a repeat.
   */
  recordLabelRefund(orderId: string, status: LabelRefundStatus): Promise<LabelRefundStatus | null>;
  /** booked → delivered once; a repeat reports the delivery already recorded and changes nothing. */
  markDelivered(ref: ShipmentRef, at: Date): Promise<DeliveryOutcome>;
}
