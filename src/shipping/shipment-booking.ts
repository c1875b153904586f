import type { ShipmentRepository } from "./shipment-repository";
import type { CarrierBooking, ShipmentRequest, ShippingProvider } from "./shipping-provider";

/**
 * What the fulfil-order workflow calls: book with the carrier, then record the booking durably.
 * A recorded booking is returned without asking the carrier again, so a retried step books
 * nothing twice even with a carrier that is not itself idempotent.
 */
export function createShipmentBooking(deps: { provider: ShippingProvider; shipments: ShipmentRepository }) {
  const { provider, shipments } = deps;
  return {
    async book(request: ShipmentRequest): Promise<CarrierBooking> {
      const recorded = await shipments.findByOrderId(request.orderId);
      if (recorded) return pickBooking(recorded);
      const booking = await provider.createShipment(request);
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

function pickBooking(record: CarrierBooking): CarrierBooking {
  return { carrier: record.carrier, trackingNumber: record.trackingNumber, trackingUrl: record.trackingUrl };
}
