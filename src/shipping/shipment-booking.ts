import type { ShipmentRepository } from "./shipment-repository";
import type { CarrierBooking, ShipmentRequest, ShippingAddress, ShippingProvider } from "./shipping-provider";

/** Where an order goes, read from the order itself (the address Stripe Checkout collected). */
export interface ShippingDestinations {
  find(orderId: string): Promise<{ address: ShippingAddress | null; digitalOnly: boolean } | null>;
}

/**
 * What the fulfil-order workflow calls: book with the carrier, then record the booking durably.
 * A recorded booking is returned without asking the carrier again, so a retried step books
 * nothing twice even with a carrier that is not itself idempotent (and the carrier adapters are
 * idempotent on their own too, for the crash between their booking and our record).
 */
export function createShipmentBooking(deps: {
  provider: ShippingProvider;
  shipments: ShipmentRepository;
  /** Supplies the address when the caller gives none; without it, the request's own is used. */
  destinations?: ShippingDestinations;
}) {
  const { provider, shipments, destinations } = deps;
  return {
    /** Null when every product of the order is digital: nothing to ship, nothing booked. */
    async book(request: ShipmentRequest): Promise<CarrierBooking | null> {
      const recorded = await shipments.findByOrderId(request.orderId);
      if (recorded) return pickBooking(recorded);
      let address = request.address;
      if (destinations) {
        const destination = await destinations.find(request.orderId);
        if (destination?.digitalOnly) return null;
        address ??= destination?.address ?? undefined;
      }
      const booking = await provider.createShipment({ ...request, ...(address ? { address } : {}) });
      return pickBooking(await shipments.recordBooked(request.orderId, booking));
    },
    async findByOrder(
      orderId: string,
    ): Promise<(CarrierBooking & { status: "booked" | "delivered" }) | null> {
      const recorded = await shipments.findByOrderId(orderId);
      return recorded ? { ...pickBooking(recorded), status: recorded.status } : null;
    },
  };
}

/** What the workflow memoises and the e-mail shows: carrier, tracking number and link. */
function pickBooking(record: CarrierBooking): CarrierBooking {
  return { carrier: record.carrier, trackingNumber: record.trackingNumber, trackingUrl: record.trackingUrl };
}
