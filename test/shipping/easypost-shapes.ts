import { z } from "zod";

/**
 * EasyPost's documented answers, as shapes the EasyPost stand-in's answers are held to
 * (test/shipping/easypost-contract.test.ts). Every key listed must be present, with its JSON
 * type; `.nullable()` where EasyPost sends null; enums hold only the documented values. Keys the
 * stand-in sends beyond these are allowed (EasyPost adds fields over time), missing ones are not.
 *
 * Where each shape comes from (read 2026-12, easypost-node at ac2a732 for the recordings):
 * - [docs]: docs.easypost.com object pages (addresses, shipments, rates, trackers, events,
 *   refunds) and their example objects;
 * - [types]: the official client's TypeScript types, node_modules/@easypost/api/types (8.9.0);
 * - [rec]: answers the real API gave, recorded by the official client's own tests in
 *   github.com/EasyPost/easypost-node test/cassettes (HAR files), named below per shape.
 */

const isoSecond = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$/);
const money = z.string().regex(/^\d+\.\d+$/);
const mode = z.enum(["test", "production"]);
const nullableString = z.string().nullable();
const idOf = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-f]{32}$`));

/** [rec] Address-Service/creates-an-address-with-verify-param, throws-an-error-when-we-cannot-create-and-verify-an-address; [types] Address/Verification.d.ts, errors. */
export const verificationErrorShape = z.object({
  code: z.string(),
  field: z.string(),
  message: z.string(),
  suggestion: nullableString,
});

/** [types] Address/VerificationDetails.d.ts; [rec] creates-a-verified-address: zip4's details null, a failed delivery's `{}`. */
const verificationDetails = z.union([
  z.object({ latitude: z.number(), longitude: z.number(), time_zone: z.string() }),
  z.object({}).strict(),
]);

export const verificationShape = z.object({
  success: z.boolean(),
  errors: z.array(verificationErrorShape),
  details: verificationDetails.nullable(),
});

/** [docs] docs/addresses "Address object"; [types] Address/Address.d.ts; [rec] Address-Service/creates-an-address (no verify: `verifications: {}`). */
export const addressShape = z.object({
  id: idOf("adr"),
  object: z.literal("Address"),
  mode,
  street1: z.string(),
  street2: nullableString,
  city: z.string(),
  state: nullableString,
  zip: z.string(),
  country: z.string().regex(/^[A-Z]{2}$/),
  residential: z.boolean().nullable(),
  carrier_facility: nullableString,
  name: nullableString,
  company: nullableString,
  phone: nullableString,
  email: nullableString,
  federal_tax_id: nullableString,
  state_tax_id: nullableString,
  verifications: z.object({ zip4: verificationShape.optional(), delivery: verificationShape.optional() }),
  created_at: isoSecond,
  updated_at: isoSecond,
});

/** An address EasyPost verified: both verifications present [rec] creates-a-verified-address, buys-a-shipment (to_address). */
export const verifiedAddressShape = addressShape.extend({
  verifications: z.object({ zip4: verificationShape, delivery: verificationShape }),
});

/** [docs] docs/parcels; [types] Parcel/Parcel.d.ts; [rec] Shipment-Service/creates-a-shipment (parcel). */
export const parcelShape = z.object({
  id: idOf("prcl"),
  object: z.literal("Parcel"),
  mode,
  length: z.number().nullable(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  predefined_package: nullableString,
  weight: z.number(),
  created_at: isoSecond,
  updated_at: isoSecond,
});

/** [docs] docs/rates; [types] Rate/Rate.d.ts (billing_type); [rec] Shipment-Service/creates-a-shipment (rates). */
export const rateShape = z.object({
  id: idOf("rate"),
  object: z.literal("Rate"),
  mode,
  service: z.string(),
  carrier: z.string(),
  carrier_account_id: z.string().regex(/^ca_/),
  shipment_id: idOf("shp"),
  rate: money,
  currency: z.string().length(3),
  retail_rate: money.nullable(),
  retail_currency: z.string().length(3).nullable(),
  list_rate: money.nullable(),
  list_currency: z.string().length(3).nullable(),
  billing_type: z.string(),
  delivery_days: z.number().int().nullable(),
  delivery_date: isoSecond.nullable(),
  delivery_date_guaranteed: z.boolean(),
  est_delivery_days: z.number().int().nullable(),
  created_at: isoSecond,
  updated_at: isoSecond,
});

/** [docs] docs/shipments "PostageLabel"; [types] Shipment/PostageLabel.d.ts; [rec] Shipment-Service/buys-a-shipment (postage_label: label_file, the *_url nulls). */
export const postageLabelShape = z.object({
  id: idOf("pl"),
  object: z.literal("PostageLabel"),
  date_advance: z.number().int(),
  integrated_form: z.string(),
  label_date: isoSecond,
  label_resolution: z.number().int(),
  label_size: z.string(),
  label_type: z.string(),
  label_file_type: z.string(),
  label_url: z.url(),
  label_pdf_url: z.url().nullable(),
  label_zpl_url: z.url().nullable(),
  label_epl2_url: z.url().nullable(),
  label_file: nullableString,
  created_at: isoSecond,
  updated_at: isoSecond,
});

/** [types] Fee/Fee.d.ts and Fee/FeeType.d.ts; [rec] buys-a-shipment (fees). */
export const feeShape = z.object({
  object: z.literal("Fee"),
  type: z.enum(["LabelFee", "PostageFee", "InsuranceFee", "TrackerFee"]),
  amount: money,
  charged: z.boolean(),
  refunded: z.boolean(),
});

/** [types] Tracker/TrackerStatus.d.ts; the service's own list (src/shipping/carrier-webhook.ts) must equal it. */
export const documentedTrackerStatuses = [
  "unknown",
  "pre_transit",
  "in_transit",
  "out_for_delivery",
  "delivered",
  "available_for_pickup",
  "return_to_sender",
  "failure",
  "cancelled",
  "error",
] as const;

/** [types] Tracker/TrackerStatusDetail.d.ts. */
const documentedStatusDetails = [
  "address_correction",
  "arrived_at_destination",
  "arrived_at_facility",
  "arrived_at_pickup_location",
  "awaiting_information",
  "cancelled",
  "damaged",
  "delayed",
  "delivery_exception",
  "departed_facility",
  "departed_origin_facility",
  "expired",
  "failure",
  "held",
  "in_transit",
  "label_created",
  "lost",
  "missorted",
  "out_for_delivery",
  "received_at_destination_facility",
  "received_at_origin_facility",
  "refused",
  "return",
  "status_update",
  "transferred_to_destination_carrier",
  "transit_exception",
  "unknown",
  "weather_delay",
] as const;

/** [types] Tracker/TrackingLocation.d.ts; [rec] Tracker-Service/retrieves-a-tracker. */
const trackingLocationShape = z.object({
  object: z.literal("TrackingLocation"),
  city: nullableString,
  state: nullableString,
  country: nullableString,
  zip: nullableString,
});

/** [types] Tracker/TrackingDetail.d.ts (description, carrier_code); [rec] Tracker-Service/retrieves-a-tracker. */
export const trackingDetailShape = z.object({
  object: z.literal("TrackingDetail"),
  message: z.string(),
  description: z.string(),
  status: z.enum(documentedTrackerStatuses),
  status_detail: z.enum(documentedStatusDetails),
  datetime: isoSecond,
  source: z.string(),
  carrier_code: z.string(),
  tracking_location: trackingLocationShape,
});

/** [types] Tracker/CarrierDetail.d.ts; [rec] Tracker-Service/retrieves-a-tracker (carrier_detail). */
const carrierDetailShape = z.object({
  object: z.literal("CarrierDetail"),
  service: nullableString,
  container_type: nullableString,
  est_delivery_date_local: nullableString,
  est_delivery_time_local: nullableString,
  origin_location: nullableString,
  origin_tracking_location: trackingLocationShape.nullable(),
  destination_location: nullableString,
  destination_tracking_location: trackingLocationShape.nullable(),
  guaranteed_delivery_date: nullableString,
  alternate_identifier: nullableString,
  initial_delivery_attempt: nullableString,
});

/** [docs] docs/trackers; [types] Tracker/Tracker.d.ts (fees, carrier_detail, finalized, is_return); [rec] buys-a-shipment (tracker: carrier_detail null, fees []). */
export const trackerShape = z.object({
  id: idOf("trk"),
  object: z.literal("Tracker"),
  mode,
  tracking_code: z.string(),
  status: z.enum(documentedTrackerStatuses),
  status_detail: z.enum(documentedStatusDetails),
  signed_by: nullableString,
  weight: z.number().nullable(),
  est_delivery_date: isoSecond.nullable(),
  shipment_id: idOf("shp").nullable(),
  carrier: z.string(),
  tracking_details: z.array(trackingDetailShape),
  carrier_detail: carrierDetailShape.nullable(),
  fees: z.array(feeShape),
  finalized: z.boolean(),
  is_return: z.boolean(),
  public_url: z.url(),
  created_at: isoSecond,
  updated_at: isoSecond,
});

/**
 * [types] Shipment/Shipment.d.ts: refund_status "submitted" | "refunded" | "rejected", and its
 * comment: bill-on-scan carriers answer "not_applicable".
 */
export const documentedRefundStatuses = ["submitted", "refunded", "rejected", "not_applicable"] as const;

/**
 * [docs] docs/shipments "Shipment object"; [types] Shipment/Shipment.d.ts; [rec]
 * Shipment-Service/creates-a-shipment and buys-a-shipment: `order_id` null, `options` filled
 * with `currency`, `payment: {type: "SENDER"}` and `date_advance` though the request set neither.
 */
export const shipmentShape = z.object({
  id: idOf("shp"),
  object: z.literal("Shipment"),
  mode,
  reference: nullableString,
  status: z.enum(documentedTrackerStatuses),
  to_address: addressShape,
  from_address: addressShape,
  return_address: addressShape,
  buyer_address: addressShape,
  parcel: parcelShape,
  customs_info: z.object({ object: z.literal("CustomsInfo") }).nullable(),
  options: z.looseObject({
    currency: z.string().length(3),
    payment: z.looseObject({ type: z.enum(["SENDER", "THIRD_PARTY", "RECEIVER", "COLLECT"]) }),
    date_advance: z.number().int(),
  }),
  is_return: z.boolean(),
  order_id: nullableString,
  rates: z.array(rateShape),
  selected_rate: rateShape.nullable(),
  postage_label: postageLabelShape.nullable(),
  tracking_code: nullableString,
  tracker: trackerShape.nullable(),
  messages: z.array(z.object({ carrier: z.string(), type: z.string(), message: z.string() })),
  fees: z.array(feeShape),
  refund_status: z.enum(documentedRefundStatuses).nullable(),
  batch_id: nullableString,
  batch_status: nullableString,
  batch_message: nullableString,
  forms: z.array(z.unknown()),
  insurance: money.nullable(),
  scan_form: z.object({ object: z.literal("ScanForm") }).nullable(),
  usps_zone: z.number().int().nullable(),
  created_at: isoSecond,
  updated_at: isoSecond,
});

/** A bought shipment: label, rate, tracker and tracking code all there [rec] buys-a-shipment; the destination verified at buy. */
export const boughtShipmentShape = shipmentShape.extend({
  to_address: verifiedAddressShape,
  selected_rate: rateShape,
  postage_label: postageLabelShape,
  tracking_code: z.string(),
  tracker: trackerShape,
});

/** [rec] Shipment-Service/retrieves-all-shipments and retrieves-next-page-of-shipments. */
export const shipmentListShape = z.object({ shipments: z.array(shipmentShape), has_more: z.boolean() });

/** [docs] docs/refunds "Refund object" and its example. */
export const refundShape = z.object({
  id: idOf("rfnd"),
  object: z.literal("Refund"),
  tracking_code: z.string(),
  confirmation_number: nullableString,
  status: z.enum(["submitted", "refunded", "rejected"]),
  carrier: z.string(),
  shipment_id: idOf("shp"),
  created_at: isoSecond,
  updated_at: isoSecond,
});

/** [docs] docs/events ("tracker.updated", "refund.successful"); [types] Event/Event.d.ts (status enum). */
const eventBase = {
  id: idOf("evt"),
  object: z.literal("Event"),
  mode,
  previous_attributes: z.record(z.string(), z.unknown()),
  status: z.enum(["completed", "failed", "in_queue", "retrying", "pending"]),
  pending_urls: z.array(z.string()),
  completed_urls: z.array(z.string()),
  created_at: isoSecond,
  updated_at: isoSecond,
};
export const trackerEventShape = z.object({
  ...eventBase,
  description: z.enum(["tracker.created", "tracker.updated"]),
  result: trackerShape,
});
export const refundEventShape = z.object({
  ...eventBase,
  description: z.literal("refund.successful"),
  result: refundShape,
});

/**
 * [docs] docs/errors: `{error: {code, message, errors}}`; [types] errors/ErrorCode.d.ts for the
 * codes. [rec] Error-Service/pulls-out-error-properties-of-an-API-error: a create without a
 * shipment is 422 PARAMETER.REQUIRED "Missing required parameter." with errors
 * [{field: "shipment", message: "cannot be blank"}].
 */
export const errorShape = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    errors: z.array(z.union([verificationErrorShape, z.object({ field: z.string(), message: z.string() })])),
  }),
});

/** Where a shape rejects an answer: one line per issue (path, what was expected). */
export function disagreements(shape: z.ZodType, answer: unknown): string[] {
  const checked = shape.safeParse(answer);
  return checked.success
    ? []
    : checked.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

/**
 * Every key path a shape requires (objects inside objects, an array's items as `[]`); keys EasyPost
 * sends only sometimes (`.optional()`, such as an address's zip4 verification) are left out.
 */
export function documentedKeys(shape: z.ZodType, prefix: string[] = []): string[][] {
  const inner = unwrap(shape);
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape as Record<string, z.ZodType>)
      .filter(([, child]) => !(child instanceof z.ZodOptional))
      .flatMap(([key, child]) => [[...prefix, key], ...documentedKeys(child, [...prefix, key])]);
  }
  if (inner instanceof z.ZodArray) return documentedKeys(inner.element as z.ZodType, [...prefix, "[]"]);
  return [];
}

function unwrap(shape: z.ZodType): z.ZodType {
  if (shape instanceof z.ZodNullable || shape instanceof z.ZodOptional)
    return unwrap(shape.unwrap() as z.ZodType);
  return shape;
}
