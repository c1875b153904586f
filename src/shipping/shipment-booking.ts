import { planParcels } from "./parcel-plan";
import {
  currentParcels,
  type ParcelBooking,
  type ShipmentRecord,
  type ShipmentRepository,
} from "./shipment-repository";
import type {
  AddressVerdict,
  CarrierBooking,
  ChosenService,
  ParcelKey,
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
  /** Per SKU: the product ships in a parcel of its own. */
  shipsAlone?: Record<string, boolean>;
  /** The shipping option the customer paid for at Checkout, when the order recorded one. */
  chosen?: ChosenService | null;
}

/** Where an order goes, read from the order itself (the address Stripe Checkout collected). */
export interface ShippingDestinations {
  find(orderId: string): Promise<Destination | null>;
  /**
   * The destination and the order's current parcels (each by its latest label) in one read, for
   * the shipment step; null when the order is not found. Without it, two reads.
   */
  findForBooking?(orderId: string): Promise<{ destination: Destination; parcels: ParcelBooking[] } | null>;
  /**
   * The destination and the order's hold in one read, for the address check; null when the order
   * is not found. Without it, the check reads the hold apart.
   */
  findForVerification?(
    orderId: string,
  ): Promise<{ destination: Destination; hold: OrderHoldLook | null } | null>;
}

/** An order's hold as the workflow's looks record it: its reason and the id its release names. */
export interface OrderHoldLook {
  reason: string;
  holdId: string;
}

/** How an order is split into parcels (SHIPPING_ITEM_WEIGHT_OZ, SHIPPING_MAX_PARCEL_WEIGHT_OZ). */
export interface ParcelLimits {
  itemWeightOz: number;
  maxWeightOz?: number | undefined;
}

/**
 * What the fulfil-order workflow calls: split the order into parcels, book each with the
 * carrier, record the bookings durably. Recorded bookings are returned without asking the carrier
 * again, so a retried step books nothing twice even with a carrier that is not itself idempotent
 * (and the carrier adapter is idempotent on its own too, per parcel reference, for the crash
 * between its booking and our record).
 */
export function createShipmentBooking(deps: {
  provider: ShippingProvider;
  shipments: ShipmentRepository;
  /** Supplies the address when the caller gives none; without it, the request's own is used. */
  destinations?: ShippingDestinations;
  /** Unset: one parcel per order (plus one per unit that ships alone), 16 oz a unit by default. */
  limits?: ParcelLimits;
}) {
  const { provider, shipments, destinations } = deps;
  const limits: ParcelLimits = deps.limits ?? { itemWeightOz: 16 };
  /** The request with the order's address and catalog facts, or null when the order is digital-only. */
  const destine = async (
    request: ShipmentRequest,
    known?: Destination | null,
  ): Promise<(ShipmentRequest & { alone: Record<string, boolean> }) | null> => {
    if (!destinations) return { ...request, alone: {} };
    const destination = known === undefined ? await destinations.find(request.orderId) : known;
    if (destination?.digitalOnly) return null;
    const address = request.address ?? destination?.address ?? undefined;
    const weights = destination?.weightsOz ?? {};
    const lines = request.lines.map((line) => ({
      ...line,
      weightOz: line.weightOz ?? weights[line.sku] ?? null,
    }));
    return {
      ...request,
      lines,
      alone: destination?.shipsAlone ?? {},
      ...(address ? { address } : {}),
      ...(destination?.chosen ? { chosen: destination.chosen } : {}),
    };
  };

  /** Books every parcel of the plan with the carrier, in parcel order, each by its own reference. */
  const bookParcels = async (
    request: ShipmentRequest,
    known?: Destination | null,
  ): Promise<ParcelBooking[] | null> => {
    const destined = await destine(request, known);
    if (!destined) return null;
    const { alone, ...shipment } = destined;
    const plan = planParcels(
      shipment.lines.map((line) => ({ ...line, shipsAlone: alone[line.sku] === true })),
      limits,
    );
    const booked: ParcelBooking[] = [];
    for (const parcel of plan) {
      const booking = await provider.createShipment({
        ...shipment,
        lines: parcel.lines,
        parcel: { parcelNumber: parcel.parcelNumber, generation: 0 },
      });
      booked.push({
        ...booking,
        parcelNumber: parcel.parcelNumber,
        lines: parcel.lines.map(({ sku, quantity }) => ({ sku, quantity })),
      });
    }
    return booked;
  };

  return {
    /**
     * Books and records every parcel (outside the fulfilment guard: tests and tools). Null when
     * every product of the order is digital: nothing to ship, nothing booked.
     */
    async book(request: ShipmentRequest): Promise<ParcelBooking[] | null> {
      const recorded = currentParcels(await shipments.listByOrder(request.orderId));
      if (recorded.length > 0) return recorded.map(pickParcel);
      const parcels = await bookParcels(request);
      if (!parcels) return null;
      const records: ParcelBooking[] = [];
      for (const parcel of parcels) {
        const record = await shipments.recordBooked(request.orderId, parcel, {
          parcelNumber: parcel.parcelNumber,
          generation: 0,
          lines: parcel.lines,
        });
        records.push(pickParcel(record));
      }
      return records;
    },
    /**
     * The carrier half of book(): the recorded parcels, else new bookings from the carrier, NOT
     * recorded. fulfill-order records them under the order's fulfilment guard instead, so
     * bookings that come back after a cancel are voided rather than recorded as shipped.
     */
    async bookWithCarrier(request: ShipmentRequest): Promise<ParcelBooking[] | null> {
      if (destinations?.findForBooking) {
        // Every order's shipment step: the recorded parcels and the destination in one read.
        const found = await destinations.findForBooking(request.orderId);
        if (found && found.parcels.length > 0) return found.parcels.map(pickParcel);
        return bookParcels(request, found ? found.destination : null);
      }
      const recorded = currentParcels(await shipments.listByOrder(request.orderId));
      if (recorded.length > 0) return recorded.map(pickParcel);
      // The whole bookings (label, service, the carrier's id), for the guarded record to store.
      return bookParcels(request);
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
    /**
     * verifyDestination and the order's hold as one read found it (`hold` undefined: not read here,
     * the caller asks the holds).
     */
    async verifyDestinationWithHold(
      orderId: string,
    ): Promise<{ verdict: AddressVerdict | null; hold?: OrderHoldLook | null }> {
      if (!provider.verifyAddress || !destinations) return { verdict: null };
      if (!destinations.findForVerification) {
        const destination = await destinations.find(orderId);
        if (!destination || destination.digitalOnly || !destination.address) return { verdict: null };
        return { verdict: await provider.verifyAddress(destination.address) };
      }
      const found = await destinations.findForVerification(orderId);
      if (!found) return { verdict: null, hold: null };
      const { destination, hold } = found;
      if (destination.digitalOnly || !destination.address) return { verdict: null, hold };
      return { verdict: await provider.verifyAddress(destination.address), hold };
    },
    /** Voids a parcel's label with the carrier; a carrier that cannot void answers `not-voidable`. */
    async voidWithCarrier(
      orderId: string,
      booking: CarrierBooking & { parcelNumber?: number },
    ): Promise<VoidOutcome> {
      if (!provider.voidShipment) return "not-voidable";
      const parcel: ParcelKey = { parcelNumber: booking.parcelNumber ?? 1, generation: 0 };
      return provider.voidShipment(orderId, booking.trackingNumber, parcel);
    },
    /**
     * The order's current parcels (a re-shipped parcel by its latest label), for a run re-driven
     * after booking: empty when nothing was booked.
     */
    async findByOrder(
      orderId: string,
    ): Promise<(ParcelBooking & { status: "booked" | "delivered"; deliveredAt: Date | null })[]> {
      const recorded = currentParcels(await shipments.listByOrder(orderId));
      return recorded.map((record) => ({
        ...pickParcel(record),
        status: record.status,
        deliveredAt: record.deliveredAt,
      }));
    },
  };
}

/** What the workflow memoises and the e-mail shows: carrier, tracking number and link, per parcel. */
function pickParcel(record: ShipmentRecord | ParcelBooking): ParcelBooking {
  return {
    carrier: record.carrier,
    trackingNumber: record.trackingNumber,
    trackingUrl: record.trackingUrl,
    parcelNumber: record.parcelNumber,
    lines: record.lines.map(({ sku, quantity }) => ({ sku, quantity })),
  };
}
