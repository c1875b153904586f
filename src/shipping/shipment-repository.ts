import type { CarrierBooking } from "./shipping-provider";

export interface ShipmentRecord extends CarrierBooking {
  orderId: string;
  trackerStatus: string | null;
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
  /** booked → delivered once; a repeat reports the delivery already recorded and changes nothing. */
  markDelivered(ref: ShipmentRef, at: Date): Promise<DeliveryOutcome>;
}
