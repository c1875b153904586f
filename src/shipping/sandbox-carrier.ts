import { createHash } from "node:crypto";
import type { CarrierBooking, ShipmentRequest, ShippingProvider, VoidOutcome } from "./shipping-provider";

export const sandboxCarrierName = "sandbox";

/**
 * The tracking number is a function of the order id alone, so a retried step (or a restarted
 * process that lost the in-memory record) gets the same number back and nothing is booked twice.
 */
export function sandboxTrackingNumber(orderId: string): string {
  const digest = createHash("sha256").update(`sandbox-carrier:${orderId}`).digest("hex");
  return `SBX${digest.slice(0, 16).toUpperCase()}`;
}

export type SandboxBooking = CarrierBooking & {
  orderId: string;
  parcels: number;
  status: "booked" | "voided";
};

export interface SandboxCarrier extends ShippingProvider {
  /** Every parcel booked so far, once each, for tests and the dev console. */
  bookings(): readonly SandboxBooking[];
  /**
   * Delay injection, like the Stripe stand-in's `hang`: the next createShipment books the parcel,
   * then answers only once `until` settles (the booking exists, the caller has not heard yet).
   */
  delayNextAnswer(until: Promise<unknown>): void;
}

/** The built-in carrier: books instantly, tracks under the shop's own /track/<number> page. */
export function createSandboxCarrier(options: { publicUrl: string }): SandboxCarrier {
  const base = options.publicUrl.endsWith("/") ? options.publicUrl : `${options.publicUrl}/`;
  const booked = new Map<string, SandboxBooking>();
  const delays: Promise<unknown>[] = [];

  const book = (request: ShipmentRequest): CarrierBooking => {
    const existing = booked.get(request.orderId);
    if (existing?.status === "booked")
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
    booked.set(request.orderId, { ...booking, orderId: request.orderId, parcels, status: "booked" });
    return booking;
  };

  return {
    async createShipment(request: ShipmentRequest) {
      const booking = book(request);
      const delay = delays.shift();
      if (delay) await delay.catch(() => undefined);
      return booking;
    },
    async voidShipment(orderId: string, trackingNumber: string): Promise<VoidOutcome> {
      const existing = booked.get(orderId);
      if (!existing || existing.trackingNumber !== trackingNumber) return "not-found";
      if (existing.status === "voided") return "already-voided";
      booked.set(orderId, { ...existing, status: "voided" });
      return "voided";
    },
    bookings: () => [...booked.values()],
    delayNextAnswer(until) {
      delays.push(until);
    },
  };
}
