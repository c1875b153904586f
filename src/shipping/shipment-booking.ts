import type { ShipmentRepository } from "./shipment-repository";
import type { CarrierBooking, ShipmentRequest, ShippingProvider, VoidOutcome } from "./shipping-provider";

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
    /**
     * The carrier half of book(): the recorded booking, else a new one from the carrier, NOT
     * recorded. fulfill-order records it under the order's fulfilment guard instead, so a booking
     * that comes back after a cancel is voided rather than recorded as shipped.
     */
    async bookWithCarrier(request: ShipmentRequest): Promise<CarrierBooking> {
      const recorded = await shipments.findByOrderId(request.orderId);
      if (recorded) return pickBooking(recorded);
      return pickBooking(await provider.createShipment(request));
    },
    /** Voids a label with the carrier; a carrier that cannot void answers `not-voidable`. */
    async voidWithCarrier(orderId: string, booking: CarrierBooking): Promise<VoidOutcome> {
      if (!provider.voidShipment) return "not-voidable";
      return provider.voidShipment(orderId, booking.trackingNumber);
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
