import { randomBytes } from "node:crypto";
import { easyPostTrackerStatuses } from "../../shipping/carrier-webhook";

/**
 * EasyPost's objects, as its API documents them (docs.easypost.com's object pages, the
 * `@easypost/api` type definitions, and the answers EasyPost gave that the official client's
 * test recordings keep): every field EasyPost sends, with its JSON type and its null where
 * EasyPost sends null, EasyPost's names, id prefixes and string-typed money. A field missing here
 * would let a later change that starts reading it pass every test and break in production;
 * test/shipping/easypost-contract.test.ts holds the stand-in to this.
 */

export const easyPostId = (prefix: string): string => `${prefix}_${randomBytes(16).toString("hex")}`;

export interface EasyPostAddress {
  id: string;
  object: "Address";
  mode: "test";
  name: string | null;
  company: string | null;
  street1: string;
  street2: string | null;
  city: string;
  state: string | null;
  zip: string;
  country: string;
  phone: string | null;
  email: string | null;
  residential: boolean | null;
  carrier_facility: string | null;
  federal_tax_id: string | null;
  state_tax_id: string | null;
  /** `{}` unless verification was asked for (`verify`, or a label bought: EasyPost verifies then). */
  verifications: Partial<Record<"zip4" | "delivery", EasyPostVerification>>;
  created_at: string;
  updated_at: string;
}

/** One address verification's outcome (its `details` are `null` for zip4, `{}` when delivery fails). */
export interface EasyPostVerification {
  success: boolean;
  errors: EasyPostVerificationError[];
  details: { latitude: number; longitude: number; time_zone: string } | Record<string, never> | null;
}

/** An address verification's error item, as EasyPost words it. */
export interface EasyPostVerificationError {
  code: string;
  field: string;
  message: string;
  suggestion: string | null;
}

export interface EasyPostParcel {
  id: string;
  object: "Parcel";
  mode: "test";
  length: number | null;
  width: number | null;
  height: number | null;
  /** Ounces. */
  weight: number;
  predefined_package: string | null;
  created_at: string;
  updated_at: string;
}

export interface EasyPostRate {
  id: string;
  object: "Rate";
  mode: "test";
  service: string;
  carrier: string;
  carrier_account_id: string;
  shipment_id: string;
  rate: string;
  currency: string;
  retail_rate: string;
  retail_currency: string;
  list_rate: string;
  list_currency: string;
  delivery_days: number;
  delivery_date: string | null;
  delivery_date_guaranteed: boolean;
  est_delivery_days: number;
  /** "easypost" (the postage is paid through EasyPost) or "carrier" (billed by the carrier). */
  billing_type: string;
  created_at: string;
  updated_at: string;
}

export interface EasyPostTrackingLocation {
  object: "TrackingLocation";
  city: string | null;
  state: string | null;
  country: string | null;
  zip: string | null;
}

export interface EasyPostTrackingDetail {
  object: "TrackingDetail";
  message: string;
  description: string;
  status: TrackerStatus;
  status_detail: string;
  datetime: string;
  source: string;
  carrier_code: string;
  tracking_location: EasyPostTrackingLocation;
}

export interface EasyPostCarrierDetail {
  object: "CarrierDetail";
  service: string | null;
  container_type: string | null;
  est_delivery_date_local: string | null;
  est_delivery_time_local: string | null;
  origin_location: string | null;
  origin_tracking_location: EasyPostTrackingLocation | null;
  destination_location: string | null;
  destination_tracking_location: EasyPostTrackingLocation | null;
  guaranteed_delivery_date: string | null;
  alternate_identifier: string | null;
  initial_delivery_attempt: string | null;
}

export interface EasyPostFee {
  object: "Fee";
  type: "LabelFee" | "PostageFee" | "InsuranceFee" | "TrackerFee";
  amount: string;
  charged: boolean;
  refunded: boolean;
}

export interface EasyPostPostageLabel {
  id: string;
  object: "PostageLabel";
  date_advance: number;
  integrated_form: string;
  label_date: string;
  label_resolution: number;
  label_size: string;
  label_type: string;
  label_file_type: string;
  label_url: string;
  label_pdf_url: string | null;
  label_zpl_url: string | null;
  label_epl2_url: string | null;
  label_file: string | null;
  created_at: string;
  updated_at: string;
}

// The stand-in answers with exactly the statuses our webhook handler accepts from EasyPost.
export const trackerStatuses = easyPostTrackerStatuses;
export type TrackerStatus = (typeof trackerStatuses)[number];

export interface EasyPostTracker {
  id: string;
  object: "Tracker";
  mode: "test";
  tracking_code: string;
  status: TrackerStatus;
  status_detail: string;
  signed_by: string | null;
  weight: number | null;
  est_delivery_date: string | null;
  shipment_id: string;
  carrier: string;
  tracking_details: EasyPostTrackingDetail[];
  carrier_detail: EasyPostCarrierDetail | null;
  fees: EasyPostFee[];
  /** Whether the tracker has stopped following the parcel (delivered, returned, or given up). */
  finalized: boolean;
  is_return: boolean;
  public_url: string;
  created_at: string;
  updated_at: string;
}

/** EasyPost's label refund states; `not_applicable`: a carrier billed on scan has nothing to refund. */
export const refundStatuses = ["submitted", "refunded", "rejected", "not_applicable"] as const;
export type RefundStatus = (typeof refundStatuses)[number];

/** The Refund object EasyPost's `refund.successful` event carries (docs.easypost.com/docs/refunds). */
export interface EasyPostRefund {
  id: string;
  object: "Refund";
  tracking_code: string;
  confirmation_number: string | null;
  status: "submitted" | "refunded" | "rejected";
  carrier: string;
  shipment_id: string;
  created_at: string;
  updated_at: string;
}

export interface EasyPostShipment {
  id: string;
  object: "Shipment";
  mode: "test";
  reference: string | null;
  status: string;
  to_address: EasyPostAddress;
  from_address: EasyPostAddress;
  return_address: EasyPostAddress;
  buyer_address: EasyPostAddress;
  parcel: EasyPostParcel;
  customs_info: null;
  /** EasyPost fills `currency`, `payment` ({type: "SENDER"}) and `date_advance` (0) when not given. */
  options: { currency: string; payment: { type: string }; date_advance: number } & Record<string, unknown>;
  is_return: boolean;
  order_id: string | null;
  rates: EasyPostRate[];
  selected_rate: EasyPostRate | null;
  postage_label: EasyPostPostageLabel | null;
  tracking_code: string | null;
  tracker: EasyPostTracker | null;
  messages: { carrier: string; type: string; message: string }[];
  fees: EasyPostFee[];
  refund_status: RefundStatus | null;
  batch_id: null;
  batch_status: null;
  batch_message: null;
  forms: [];
  insurance: null;
  scan_form: null;
  usps_zone: number | null;
  created_at: string;
  updated_at: string;
}

export interface EasyPostEvent {
  id: string;
  object: "Event";
  mode: "test";
  description: string;
  previous_attributes: Record<string, unknown>;
  result: EasyPostTracker | EasyPostRefund;
  status: "pending" | "completed" | "failed" | "in_queue" | "retrying";
  pending_urls: string[];
  completed_urls: string[];
  user_id: string;
  created_at: string;
  updated_at: string;
}

/** The rate table: what a test account's USPS, UPS and FedEx accounts quote, by zone distance. */
const rateTable: readonly {
  carrier: string;
  service: string;
  base: number;
  perOunce: number;
  days: number;
}[] = [
  { carrier: "USPS", service: "GroundAdvantage", base: 5.2, perOunce: 0.08, days: 5 },
  { carrier: "USPS", service: "Priority", base: 8.7, perOunce: 0.1, days: 2 },
  { carrier: "USPS", service: "Express", base: 28.75, perOunce: 0.15, days: 1 },
  { carrier: "UPS", service: "Ground", base: 9.45, perOunce: 0.06, days: 4 },
  { carrier: "UPS", service: "NextDayAir", base: 34.1, perOunce: 0.2, days: 1 },
  { carrier: "FedEx", service: "FEDEX_GROUND", base: 8.95, perOunce: 0.07, days: 4 },
];

export function ratesFor(
  shipmentId: string,
  parcel: EasyPostParcel,
  international: boolean,
  at: string,
): EasyPostRate[] {
  return rateTable
    .filter((row) => !international || row.service !== "GroundAdvantage")
    .map((row) => {
      const amount = (row.base + row.perOunce * parcel.weight) * (international ? 3 : 1);
      const rate = amount.toFixed(2);
      return {
        id: easyPostId("rate"),
        object: "Rate" as const,
        mode: "test" as const,
        service: row.service,
        carrier: row.carrier,
        carrier_account_id: `ca_${row.carrier.toLowerCase().padEnd(32, "0")}`,
        shipment_id: shipmentId,
        rate,
        currency: "USD",
        retail_rate: (amount * 1.15).toFixed(2),
        retail_currency: "USD",
        list_rate: (amount * 1.08).toFixed(2),
        list_currency: "USD",
        delivery_days: row.days,
        delivery_date: null,
        delivery_date_guaranteed: false,
        est_delivery_days: row.days,
        billing_type: "easypost",
        created_at: at,
        updated_at: at,
      };
    });
}

/** Tracking numbers shaped like each carrier's (the shape is all a reader can check). */
export function trackingCodeFor(carrier: string): string {
  const digits = (n: number) => Array.from(randomBytes(n), (byte) => String(byte % 10)).join("");
  if (carrier === "UPS") return `1Z${randomBytes(8).toString("hex").toUpperCase().slice(0, 16)}`;
  if (carrier === "FedEx") return digits(12);
  return `9400${digits(18)}`;
}

/** The message a carrier scan carries for each tracker status. */
export const statusMessages: Record<TrackerStatus, string> = {
  unknown: "Status unknown",
  pre_transit: "Shipping Label Created, USPS Awaiting Item",
  in_transit: "Arrived at USPS Regional Facility",
  out_for_delivery: "Out for Delivery",
  delivered: "Delivered, In/At Mailbox",
  available_for_pickup: "Available for Pickup",
  return_to_sender: "Return to Sender",
  failure: "Delivery Attempt Failed",
  cancelled: "Shipment Cancelled",
  error: "Error",
};

/** The usual way through: each advance moves the tracker one step along this path. */
export const happyPath: readonly TrackerStatus[] = [
  "pre_transit",
  "in_transit",
  "out_for_delivery",
  "delivered",
];
