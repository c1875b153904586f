export interface ShippingAddress {
  name?: string;
  /** Some carriers (UPS, FedEx) need one on the label; collected at checkout when configured. */
  phone?: string;
  line1: string;
  line2?: string;
  city: string;
  /** State, province or region, where the country uses one. */
  state?: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
}

/** Which label of an order: parcel 1, 2, ... and its re-ship generation (0: the first label). */
export interface ParcelKey {
  parcelNumber: number;
  generation: number;
}

export const firstParcel: ParcelKey = { parcelNumber: 1, generation: 0 };

export interface ShipmentRequest {
  orderId: string;
  /** Unset: parcel 1, generation 0 (an order in one parcel, as before several parcels existed). */
  parcel?: ParcelKey;
  address?: ShippingAddress;
  /** `weightOz`: one unit's weight from the catalog; without it the carrier's default item weight. */
  lines: readonly { sku: string; quantity: number; weightOz?: number | null }[];
  /**
   * The shipping option the customer paid for at Checkout (its rate's metadata, recorded with the
   * order's money): the label is bought at its `service` (and `carrier`) when the carrier offers it.
   */
  chosen?: ChosenService | null;
}

/** The carrier service a customer's shipping option names, and what the customer paid for it. */
export interface ChosenService {
  carrier?: string | undefined;
  service?: string | undefined;
  rateId?: string | undefined;
  displayName?: string | null | undefined;
  /** What the customer paid for shipping, before its tax (minor units). */
  quotedAmount: number;
}

export interface CarrierBooking {
  carrier: string;
  trackingNumber: string;
  trackingUrl: string;
  /** The carrier's service level, the label to print and the provider's shipment id, where known. */
  service?: string | null;
  labelUrl?: string | null;
  providerId?: string | null;
  /** What the label cost (minor units), where the carrier says. */
  labelAmount?: number | null;
  /** The label cost's currency (lowercase ISO), with labelAmount. */
  labelCurrency?: string | null;
  /**
   * The option the customer paid for, when the order has one, and whether this label is at its
   * service (`matched`) or the fallback (the cheapest of SHIPPING_SERVICE_LEVELS).
   */
  chosen?: (ChosenService & { matched: boolean }) | null;
}

/**
 * What asking a carrier to void a booked label did; `not-voidable` means ops must stop the parcel.
 * EasyPost answers with its label refund's status: `submitted` (the carrier processes it later),
 * `refunded`, or `rejected` (the carrier scanned the parcel, or refused).
 */
export type VoidOutcome = "voided" | "already-voided" | "not-found" | "not-voidable" | LabelRefundStatus;

/** The carrier's verdict on a delivery address; `message` is the carrier's own words. */
export type AddressVerdict = { deliverable: true } | { deliverable: false; message: string };

/**
 * EasyPost's Shipment.refund_status. `not_applicable`: a carrier billed on scan has nothing to
 * refund (the label costs nothing unless the carrier scans it), and asking again changes nothing.
 */
export type LabelRefundStatus = "submitted" | "refunded" | "rejected" | "not_applicable";

/**
 * A carrier that books parcels. createShipment is idempotent per order and parcel key: asking again for an order
 * that is already booked returns that booking and books nothing, so a retried step is harmless.
 */
export interface ShippingProvider {
  createShipment(request: ShipmentRequest): Promise<CarrierBooking>;
  /**
   * Voids a booked label before the parcel moves (fulfilment undoes a booking that landed after a
   * cancel). Optional: a carrier without it gets ops alerted instead.
   */
  voidShipment?(orderId: string, trackingNumber: string, parcel?: ParcelKey): Promise<VoidOutcome>;
  /**
   * Asks the carrier whether it can deliver to the address (EasyPost's delivery verification).
   * Optional: a carrier without it ships to any address it accepts.
   */
  verifyAddress?(address: ShippingAddress): Promise<AddressVerdict>;
  /** Where a submitted label refund stands now (null: none asked, or unknown to the carrier). */
  labelRefundStatus?(orderId: string, parcel?: ParcelKey): Promise<LabelRefundStatus | null>;
}
