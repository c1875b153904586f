import { createHash } from "node:crypto";
import type { CarrierBooking, ShipmentRequest, ShippingProvider } from "./shipping-provider";

export const sandboxCarrierName = "sandbox";

/**
 * The tracking number is a function of the order id alone, so a retried step (or a restarted
 * process that lost the in-memory record) gets the same number back and nothing is booked twice.
 */
export function sandboxTrackingNumber(orderId: string): string {
  const digest = createHash("sha256").update(`sandbox-carrier:${orderId}`).digest("hex");
  return `SBX${digest.slice(0, 16).toUpperCase()}`;
}

export interface SandboxCarrier extends ShippingProvider {
  /** Every parcel booked so far, once each, for tests and the dev console. */
  bookings(): readonly (CarrierBooking & { orderId: string; parcels: number })[];
}

/** The built-in carrier: books instantly, tracks under the shop's own /track/<number> page. */
export function createSandboxCarrier(options: { publicUrl: string }): SandboxCarrier {
  const base = options.publicUrl.endsWith("/") ? options.publicUrl : `${options.publicUrl}/`;
  const booked = new Map<string, CarrierBooking & { orderId: string; parcels: number }>();

  return {
    async createShipment(request: ShipmentRequest) {
      const existing = booked.get(request.orderId);
      if (existing)
        return {
          carrier: existing.carrier,
          trackingNumber: existing.trackingNumber,
          trackingUrl: existing.trackingUrl,
        };
      if (request.lines.length === 0) throw new Error(`order ${request.orderId}: nothing to ship`);
      const trackingNumber = sandboxTrackingNumber(request.orderId);
      const booking: CarrierBooking = {
        carrier: sandboxCarrierName,
        trackingNumber,
        trackingUrl: new URL(`track/${trackingNumber}`, base).toString(),
      };
      const parcels = request.lines.reduce((sum, line) => sum + line.quantity, 0);
      booked.set(request.orderId, { ...booking, orderId: request.orderId, parcels });
      return booking;
    },
    bookings: () => [...booked.values()],
  };
}
