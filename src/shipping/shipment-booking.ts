import type { ShipmentRepository } from "./shipment-repository";
import type {
  AddressVerdict,
  CarrierBooking,
  ShipmentRequest,
  ShippingAddress,
  ShippingProvider,
  VoidOutcome,
} from "./shipping-provider";

export interface Destination {
  address: ShippingAddress | null;
  digitalOnly: boolean;
  /** One unit's weight in ounces per SKU, where the catalog has one. */
  weightsOz?: Record<string, number | null>;
}

/** Where an order goes, read from the order itself (the address Stripe Checkout collected). */
export interface ShippingDestinations {
  find(orderId: string): Promise<Destination | null>;
  /**
   * The destination and the booking already recorded for the order, in one read: what the
   * shipment step asks before it books (a retried step finds its booking).
   */
  findWithBooking?(
    orderId: string,
  ): Promise<{ destination: Destination | null; booking: CarrierBooking | null }>;
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
  /** The request with the order's address, or null when the order is digital-only. */
  const destine = async (request: ShipmentRequest): Promise<ShipmentRequest | null> => {
    if (!destinations) return request;
    return destineTo(request, await destinations.find(request.orderId));
  };
  const destineTo = (request: ShipmentRequest, destination: Destination | null): ShipmentRequest | null => {
    if (destination?.digitalOnly) return null;
    const address = request.address ?? destination?.address ?? undefined;
    const weights = destination?.weightsOz ?? {};
    const lines = request.lines.map((line) => ({
      ...line,
      weightOz: line.weightOz ?? weights[line.sku] ?? null,
    }));
    return { ...request, lines, ...(address ? { address } : {}) };
  };
  return {
    /** Null when every product of the order is digital: nothing to ship, nothing booked. */
    async book(request: ShipmentRequest): Promise<CarrierBooking | null> {
      const recorded = await shipments.findByOrderId(request.orderId);
      if (recorded) return pickBooking(recorded);
      const destined = await destine(request);
      if (!destined) return null;
      const booking = await provider.createShipment(destined);
      return pickBooking(await shipments.recordBooked(request.orderId, booking));
    },
    /**
     * The carrier half of book(): the recorded booking, else a new one from the carrier, NOT
     * recorded. fulfill-order records it under the order's fulfilment guard instead, so a booking
     * that comes back after a cancel is voided rather than recorded as shipped.
     */
    async bookWithCarrier(request: ShipmentRequest): Promise<CarrierBooking | null> {
      if (destinations?.findWithBooking) {
        const found = await destinations.findWithBooking(request.orderId);
        if (found.booking) return pickBooking(found.booking);
        const destined = destineTo(request, found.destination);
        return destined ? provider.createShipment(destined) : null;
      }
      const recorded = await shipments.findByOrderId(request.orderId);
      if (recorded) return pickBooking(recorded);
      const destined = await destine(request);
      if (!destined) return null;
      // The whole booking (label, service, the carrier's id), for the guarded record to store.
      return provider.createShipment(destined);
    },
    /**
     * The carrier's verdict on the order's delivery address, before a label is bought. Null: no
     * parcel (digital-only), no address recorded, or a carrier without verification.
     */
    async verifyDestination(orderId: string): Promise<AddressVerdict | null> {
      if (!provider.verifyAddress || !destinations) return null;
      const destination = await destinations.find(orderId);
      if (!destination || destination.digitalOnly || !destination.address) return null;
      return provider.verifyAddress(destination.address);
    },
    /** Voids a label with the carrier; a carrier that cannot void answers `not-voidable`. */
    async voidWithCarrier(orderId: string, booking: CarrierBooking): Promise<VoidOutcome> {
      if (!provider.voidShipment) return "not-voidable";
      return provider.voidShipment(orderId, booking.trackingNumber);
    },
    async findByOrder(
      orderId: string,
    ): Promise<(CarrierBooking & { status: "booked" | "delivered"; deliveredAt: Date | null }) | null> {
      const recorded = await shipments.findByOrderId(orderId);
      return recorded
        ? { ...pickBooking(recorded), status: recorded.status, deliveredAt: recorded.deliveredAt }
        : null;
    },
  };
}

/** What the workflow memoises and the e-mail shows: carrier, tracking number and link. */
function pickBooking(record: CarrierBooking): CarrierBooking {
  return { carrier: record.carrier, trackingNumber: record.trackingNumber, trackingUrl: record.trackingUrl };
}
