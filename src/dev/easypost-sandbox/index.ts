import { listenOn } from "../listen";
import { createHmac } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import path from "node:path";
import express, { type NextFunction, type Request, type Response } from "express";
import { z } from "zod";
import type { Logger } from "../../logger";
import {
  easyPostId,
  happyPath,
  ratesFor,
  statusMessages,
  trackerStatuses,
  trackingCodeFor,
  type EasyPostAddress,
  type EasyPostEvent,
  type EasyPostPostageLabel,
  type EasyPostRefund,
  type EasyPostVerification,
  type RefundStatus,
  type EasyPostParcel,
  type EasyPostShipment,
  type EasyPostTracker,
  type TrackerStatus,
} from "./objects";

export type { EasyPostEvent, EasyPostShipment, EasyPostTracker, TrackerStatus };

/**
 * A local stand-in for the parts of EasyPost's API this service uses (shipments: create,
 * retrieve by id or reference, buy, refund; trackers: retrieve; addresses: create and verify), spoken to by the official `@easypost/api`
 * client pointed at it with its `baseUrl` option, plus `/_sandbox` control routes that play the
 * carrier: advance a tracker and POST the signed `tracker.updated` event to the webhook URL, the
 * way EasyPost signs them (`X-Hmac-Signature: hmac-sha256-hex=<HMAC-SHA256 of the body>`).
 */

export const easyPostSandboxEndpoints = [
  "shipments.create",
  "shipments.retrieve",
  "shipments.buy",
  "shipments.refund",
  "trackers.retrieve",
  "shipments.list",
  "addresses.create",
] as const;
export type EasyPostSandboxEndpoint = (typeof easyPostSandboxEndpoints)[number];

/**
 * What an injected failure does to the next call(s) of an endpoint:
 * - `server_error`: 500 before anything executes, nothing saved;
 * - `rate_limited`: 429 before anything executes;
 * - `delay`: answers normally after `ms`; with `afterProcessing` the change is made first, so a
 *   client that gives up meanwhile (or a process killed meanwhile) finds it done on its retry;
 * - `hang`: like delay, but never answers (the client's timeout fires); `afterProcessing` again
 *   decides whether the change happened;
 * - `held`: like delay, but answers once `until` settles (tests gate a call on a state instead of
 *   a timer: "the label is bought, the answer is still on the wire"). In-process only.
 */
export type EasyPostInjectedFailure =
  | { kind: "server_error" }
  | { kind: "rate_limited" }
  | { kind: "delay"; ms: number; afterProcessing?: boolean }
  | { kind: "hang"; afterProcessing?: boolean }
  | { kind: "held"; until: Promise<unknown>; afterProcessing?: boolean };

export interface EasyPostRequestLogEntry {
  endpoint: EasyPostSandboxEndpoint;
  method: string;
  path: string;
  status: number;
  at: number;
}

export interface EasyPostDelivery {
  eventId: string;
  trackingCode: string;
  /** The tracker's status, or the Refund's for a `refund.successful` event. */
  status: TrackerStatus | RefundStatus;
  /** HTTP status of the webhook's answer, or 0 when it could not be reached. */
  responseStatus: number;
  error?: string;
}

export interface EasyPostSandboxOptions {
  /** The webhook's secret, as set on the EasyPost dashboard (EASYPOST_WEBHOOK_SECRET). */
  webhookSecret: string;
  /** Where tracker events go (the service's /api/carrier/webhook); settable later. */
  webhookUrl?: string;
  logger: Logger;
  /** Keep state across restarts in this JSON file (written through on every change). */
  stateFile?: string;
  now?: () => number;
  /**
   * How long a submitted label refund takes to be decided (EasyPost: USPS at least 15 days, at
   * most 30): `refunded`, or `rejected` when the carrier scanned the parcel. Unset: only
   * `settleLabelRefund` decides it.
   */
  refundProcessingMs?: number;
  /**
   * Carriers billed on scan (which ones depends on the account's carrier contracts): their labels
   * cost nothing until the carrier scans them, and EasyPost answers a refund with
   * `not_applicable`. Settable later with `setBilledOnScan`.
   */
  billedOnScan?: readonly string[];
}

interface State {
  shipments: Record<string, EasyPostShipment>;
  trackers: Record<string, EasyPostTracker>;
  events: EasyPostEvent[];
  /** When each shipment's label refund was submitted (not part of EasyPost's object). */
  refundsSubmittedAt?: Record<string, number>;
  /** Each submitted label refund's Refund object (EasyPost's `rfnd_`), by shipment id. */
  refunds?: Record<string, EasyPostRefund>;
}

export interface EasyPostSandbox {
  app: express.Express;
  listen(port: number, host?: string): Promise<{ url: string }>;
  close(): Promise<void>;
  /** http://host:port once listening (the client's baseUrl is `${url}/v2/`). */
  readonly url: string | undefined;
  /** The client's baseUrl option for this stand-in. */
  readonly apiBase: string | undefined;
  setWebhookUrl(url: string | undefined): void;
  /** Which carriers bill on scan from now on (their refunds answer `not_applicable`). */
  setBilledOnScan(carriers: readonly string[]): void;
  injectFailure(endpoint: EasyPostSandboxEndpoint, failure: EasyPostInjectedFailure, times?: number): void;
  clearFailures(): void;
  /** Moves the tracker of a shipment (by tracking code, tracker id or shipment id/reference) and delivers the event. */
  advanceTracker(
    ref: string,
    status?: TrackerStatus,
    options?: { deliver?: boolean },
  ): Promise<{
    tracker: EasyPostTracker;
    event: EasyPostEvent;
    delivery?: EasyPostDelivery;
  }>;
  /** The exact body and X-Hmac-Signature a delivery of this event would carry. */
  signedDelivery(eventId: string): { body: string; signature: string };
  shipments(): EasyPostShipment[];
  /** Every event the stand-in made (tracker.updated, refund.successful), oldest first. */
  events(): readonly EasyPostEvent[];
  /**
   * Plays the carrier deciding a submitted label refund: by default `rejected` when the parcel
   * was scanned (before or after the request), else `refunded`. EasyPost then sends a
   * `refund.successful` event carrying the Refund (delivered unless `deliver: false`).
   */
  settleLabelRefund(
    ref: string,
    status?: "refunded" | "rejected",
    options?: { deliver?: boolean },
  ): Promise<EasyPostShipment>;
  /** Shipments with a purchased label. */
  purchased(): EasyPostShipment[];
  readonly requests: readonly EasyPostRequestLogEntry[];
  readonly deliveries: readonly EasyPostDelivery[];
}

/** EasyPost's error body: `{ error: { code, message, errors } }`. */
class EasyPostApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: { field: string; message: string; code?: string; suggestion?: string | null }[] = [],
  ) {
    super(message);
  }
}

const notFound = () => new EasyPostApiError(404, "NOT_FOUND", "The requested resource could not be found.");

/** EasyPost's webhook signature: HMAC-SHA256 over the body with the NFKD-normalised secret. */
export function easyPostWebhookSignature(body: string, secret: string): string {
  const key = Buffer.from(secret.normalize("NFKD"), "utf8");
  return `hmac-sha256-hex=${createHmac("sha256", key).update(body, "utf8").digest("hex")}`;
}

const addressInput = z.object({
  name: z.string().optional().nullable(),
  company: z.string().optional().nullable(),
  street1: z.string().optional().nullable(),
  street2: z.string().optional().nullable(),
  city: z.string().optional().nullable(),
  state: z.string().optional().nullable(),
  zip: z.string().optional().nullable(),
  country: z.string().optional().nullable(),
  phone: z.string().optional().nullable(),
  email: z.string().optional().nullable(),
});
type AddressInput = z.infer<typeof addressInput>;

const shipmentInput = z.object({
  shipment: z.object({
    reference: z.string().max(100).optional().nullable(),
    to_address: addressInput.optional(),
    from_address: addressInput.optional(),
    parcel: z
      .object({
        length: z.number().optional().nullable(),
        width: z.number().optional().nullable(),
        height: z.number().optional().nullable(),
        weight: z.number().optional().nullable(),
        predefined_package: z.string().optional().nullable(),
      })
      .optional(),
    options: z.record(z.string(), z.unknown()).optional(),
    is_return: z.boolean().optional(),
  }),
});
const buyInput = z.object({ rate: z.object({ id: z.string() }), insurance: z.unknown().optional() });

const failureInput = z.object({
  endpoint: z.enum(easyPostSandboxEndpoints),
  kind: z.enum(["server_error", "rate_limited", "delay", "hang"]),
  ms: z.number().int().nonnegative().optional(),
  afterProcessing: z.boolean().optional(),
  times: z.number().int().positive().optional(),
});
const listInput = z.object({
  page_size: z.coerce.number().int().min(1).max(100).default(20),
  before_id: z.string().optional(),
  after_id: z.string().optional(),
  start_datetime: z.iso.datetime({ offset: true }).optional(),
  end_datetime: z.iso.datetime({ offset: true }).optional(),
  purchased: z.enum(["true", "false"]).optional(),
  include_children: z.string().optional(),
});
const advanceInput = z.object({
  status: z.enum(trackerStatuses).optional(),
  deliver: z.boolean().optional(),
});

function loadState(file: string | undefined): State {
  const empty: State = { shipments: {}, trackers: {}, events: [] };
  if (!file) return empty;
  try {
    return upgradeState({ ...empty, ...(JSON.parse(readFileSync(file, "utf8")) as State) });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return empty;
    throw error;
  }
}

/**
 * A state file written before the stand-in sent every documented field (a developer's DATA_DIR):
 * its objects get the fields they lack, with EasyPost's defaults, so what it answers keeps
 * EasyPost's shape. Fields already there are left as they are.
 */
function upgradeState(state: State): State {
  type Loose = Record<string, unknown>;
  const fill = (target: object | null | undefined, defaults: Loose) => {
    if (!target) return;
    for (const [key, value] of Object.entries(defaults)) if (!(key in target)) (target as Loose)[key] = value;
  };
  const address = (a: EasyPostAddress) =>
    fill(a, {
      residential: null,
      carrier_facility: null,
      federal_tax_id: null,
      state_tax_id: null,
      verifications: {},
    });
  const tracker = (t: EasyPostTracker | null) => {
    fill(t, { carrier_detail: null, fees: [], finalized: false, is_return: false });
    for (const detail of t?.tracking_details ?? []) fill(detail, { description: "", carrier_code: "" });
  };
  for (const shipment of Object.values(state.shipments)) {
    fill(shipment, { order_id: null });
    fill(shipment.options, { currency: "USD", payment: { type: "SENDER" }, date_advance: 0 });
    for (const a of [
      shipment.to_address,
      shipment.from_address,
      shipment.return_address,
      shipment.buyer_address,
    ])
      address(a);
    for (const rate of [...shipment.rates, shipment.selected_rate]) fill(rate, { billing_type: "easypost" });
    fill(shipment.postage_label, {
      date_advance: 0,
      integrated_form: "none",
      label_type: "default",
      label_pdf_url: null,
      label_zpl_url: null,
      label_epl2_url: null,
      label_file: null,
    });
    tracker(shipment.tracker);
  }
  for (const t of Object.values(state.trackers)) tracker(t);
  return state;
}

/**
 * Destinations no carrier of the stand-in's accounts delivers to (embargoed): a shipment to one
 * has no rates, only a rate_error message per carrier, as EasyPost answers an unratable one.
 */
export const unratableCountries: readonly string[] = ["CU", "IR", "KP", "SY"];
const unratable = new Set(unratableCountries);
const carriersRated = ["USPS", "UPS", "FedEx"];

export function createEasyPostSandbox(options: EasyPostSandboxOptions): EasyPostSandbox {
  const logger = options.logger.child({ component: "easypost-sandbox" });
  const now = options.now ?? Date.now;
  const iso = () => new Date(now()).toISOString().replace(/\.\d{3}Z$/, "Z");
  const state = loadState(options.stateFile);
  let webhookUrl = options.webhookUrl;
  let billedOnScan = new Set(options.billedOnScan ?? []);
  let url: string | undefined;
  let server: Server | undefined;
  const requests: EasyPostRequestLogEntry[] = [];
  const deliveries: EasyPostDelivery[] = [];
  let rules: { endpoint: EasyPostSandboxEndpoint; failure: EasyPostInjectedFailure; remaining: number }[] =
    [];
  const hanging = new Set<Response>();

  const persist = () => {
    if (!options.stateFile) return;
    mkdirSync(path.dirname(options.stateFile), { recursive: true });
    const temporary = `${options.stateFile}.tmp`;
    writeFileSync(temporary, JSON.stringify(state), { mode: 0o600 });
    renameSync(temporary, options.stateFile);
  };

  const takeFailure = (endpoint: EasyPostSandboxEndpoint): EasyPostInjectedFailure | undefined => {
    const rule = rules.find((candidate) => candidate.endpoint === endpoint);
    if (!rule) return undefined;
    rule.remaining -= 1;
    if (rule.remaining === 0) rules = rules.filter((candidate) => candidate !== rule);
    return rule.failure;
  };

  /**
   * A shipment's address. EasyPost rates a shipment whose addresses carry only what rating needs
   * (country and postal code: checkout's live rates, before the customer typed a street); the
   * street and city are needed to buy its label (buyShipment refuses without them).
   */
  const toAddress = (input: AddressInput | undefined, label: string): EasyPostAddress => {
    const errors: { field: string; message: string }[] = [];
    for (const field of ["zip", "country"] as const) {
      if (!input?.[field]) errors.push({ field: `shipment.${label}.${field}`, message: "cannot be blank" });
    }
    if (errors.length > 0) {
      throw new EasyPostApiError(422, "PARAMETER.REQUIRED", "Missing required parameter.", errors);
    }
    const at = iso();
    return {
      id: easyPostId("adr"),
      object: "Address",
      mode: "test",
      name: input?.name ?? null,
      company: input?.company ?? null,
      street1: input?.street1 ?? "",
      street2: input?.street2 ?? null,
      city: input?.city ?? "",
      state: input?.state ?? null,
      zip: input?.zip as string,
      country: (input?.country as string).toUpperCase(),
      phone: input?.phone ?? null,
      email: input?.email ?? null,
      residential: null,
      carrier_facility: null,
      federal_tax_id: null,
      state_tax_id: null,
      verifications: {},
      created_at: at,
      updated_at: at,
    };
  };

  const findShipment = (idOrReference: string): EasyPostShipment => {
    const byId = state.shipments[idOrReference];
    if (byId) return byId;
    // A reference may stand in for the id; with several, EasyPost does not promise which one
    // answers, so the stand-in answers the oldest.
    const byReference = Object.values(state.shipments).find((s) => s.reference === idOrReference);
    if (byReference) return byReference;
    throw notFound();
  };

  const createShipment = (body: unknown): EasyPostShipment => {
    const given = (body ?? {}) as { shipment?: unknown };
    if (given.shipment === undefined || given.shipment === null || given.shipment === "") {
      // EasyPost's answer to a create without a shipment (recorded in easypost-node's cassettes).
      throw new EasyPostApiError(422, "PARAMETER.REQUIRED", "Missing required parameter.", [
        { field: "shipment", message: "cannot be blank" },
      ]);
    }
    const parsed = shipmentInput.safeParse(body);
    if (!parsed.success) {
      throw new EasyPostApiError(
        422,
        "PARAMETER.INVALID",
        "Invalid parameter.",
        parsed.error.issues.map((issue) => ({ field: issue.path.join("."), message: issue.message })),
      );
    }
    const input = parsed.data.shipment;
    // A return label is asked for with the outbound shipment's own addresses and `is_return:
    // true`; EasyPost switches to_address and from_address for the return shipment (its docs,
    // "Create Return for a Shipment"), so the label, the rates and the tracker's delivery scan
    // are the warehouse's.
    const addresses = {
      to: toAddress(input.to_address, "to_address"),
      from: toAddress(input.from_address, "from_address"),
    };
    const to = input.is_return ? addresses.from : addresses.to;
    const from = input.is_return ? addresses.to : addresses.from;
    if (!input.parcel?.weight || input.parcel.weight <= 0) {
      throw new EasyPostApiError(422, "PARAMETER.REQUIRED", "Missing required parameter.", [
        { field: "shipment.parcel.weight", message: "must be greater than 0" },
      ]);
    }
    const at = iso();
    const id = easyPostId("shp");
    const parcel: EasyPostParcel = {
      id: easyPostId("prcl"),
      object: "Parcel",
      mode: "test",
      length: input.parcel.length ?? null,
      width: input.parcel.width ?? null,
      height: input.parcel.height ?? null,
      weight: input.parcel.weight,
      predefined_package: input.parcel.predefined_package ?? null,
      created_at: at,
      updated_at: at,
    };
    const shipment: EasyPostShipment = {
      id,
      object: "Shipment",
      mode: "test",
      reference: input.reference ?? null,
      status: "unknown",
      to_address: to,
      from_address: from,
      // A return goes back to the shop: its return address is the warehouse, not the customer.
      return_address: input.is_return ? to : from,
      buyer_address: to,
      parcel,
      customs_info: null,
      // EasyPost fills these even when `options` is empty (recorded answers).
      options: { currency: "USD", payment: { type: "SENDER" }, date_advance: 0, ...(input.options ?? {}) },
      is_return: input.is_return ?? false,
      order_id: null,
      rates: unratable.has(to.country) ? [] : ratesFor(id, parcel, to.country !== from.country, at),
      selected_rate: null,
      postage_label: null,
      tracking_code: null,
      tracker: null,
      // EasyPost's answer when no carrier rates the destination: no rates, a rate_error per carrier.
      messages: unratable.has(to.country)
        ? carriersRated.map((carrier) => ({
            carrier,
            type: "rate_error",
            message: `${carrier} does not deliver to ${to.country}`,
          }))
        : [],
      fees: [],
      refund_status: null,
      batch_id: null,
      batch_status: null,
      batch_message: null,
      forms: [],
      insurance: null,
      scan_form: null,
      usps_zone: 4,
      created_at: at,
      updated_at: at,
    };
    state.shipments[id] = shipment;
    persist();
    return shipment;
  };

  const buyShipment = (idOrReference: string, body: unknown): EasyPostShipment => {
    const shipment = findShipment(idOrReference);
    const parsed = buyInput.safeParse(body);
    if (!parsed.success) {
      throw new EasyPostApiError(422, "PARAMETER.REQUIRED", "Missing required parameter.", [
        { field: "rate.id", message: "cannot be blank" },
      ]);
    }
    const incomplete = (["to_address", "from_address"] as const).flatMap((which) =>
      (["street1", "city"] as const)
        .filter((field) => !shipment[which][field])
        .map((field) => ({ field: `shipment.${which}.${field}`, message: "cannot be blank" })),
    );
    if (incomplete.length > 0) {
      // A shipment made for its rates only (no street yet): a label needs the whole address.
      throw new EasyPostApiError(422, "SHIPMENT.POSTAGE.FAILURE", "Unable to buy postage.", incomplete);
    }
    if (shipment.postage_label) {
      // Buying is not idempotent at EasyPost: a second buy is refused, never charged twice.
      throw new EasyPostApiError(422, "SHIPMENT.POSTAGE.EXISTS", "Postage already exists for this shipment.");
    }
    const rate = shipment.rates.find((candidate) => candidate.id === parsed.data.rate.id);
    if (!rate) throw new EasyPostApiError(404, "NOT_FOUND", "The requested resource could not be found.");
    const at = iso();
    const trackingCode = trackingCodeFor(rate.carrier);
    const tracker: EasyPostTracker = {
      id: easyPostId("trk"),
      object: "Tracker",
      mode: "test",
      tracking_code: trackingCode,
      status: "unknown",
      status_detail: "unknown",
      signed_by: null,
      weight: null,
      est_delivery_date: null,
      shipment_id: shipment.id,
      carrier: rate.carrier,
      tracking_details: [],
      carrier_detail: null,
      fees: [],
      finalized: false,
      is_return: shipment.is_return,
      public_url: `https://track.easypost.com/${Buffer.from(trackingCode).toString("base64url")}`,
      created_at: at,
      updated_at: at,
    };
    state.trackers[tracker.id] = tracker;
    const postageLabel: EasyPostPostageLabel = {
      id: easyPostId("pl"),
      object: "PostageLabel",
      date_advance: 0,
      integrated_form: "none",
      label_date: at,
      label_resolution: 300,
      label_size: "4x6",
      label_type: "default",
      label_file_type: "image/png",
      label_url: `${url ?? "http://127.0.0.1"}/_sandbox/labels/${shipment.id}.png`,
      label_pdf_url: null,
      label_zpl_url: null,
      label_epl2_url: null,
      label_file: null,
      created_at: at,
      updated_at: at,
    };
    // EasyPost verifies and normalises the destination when it buys the label: the bought
    // shipment's to_address comes back in the carrier's capitals, with ZIP+4, `residential` and
    // `verifications` (zip4, delivery), and buyer_address with it.
    const normalised = normaliseAddress(shipment.to_address, at);
    Object.assign(shipment, {
      selected_rate: rate,
      tracking_code: trackingCode,
      tracker,
      status: "unknown",
      postage_label: postageLabel,
      to_address: normalised,
      buyer_address:
        shipment.buyer_address.id === shipment.to_address.id ? normalised : shipment.buyer_address,
      // A carrier billed on scan charges the postage when it scans the parcel, not now.
      fees: [
        { object: "Fee", type: "LabelFee", amount: "0.00000", charged: true, refunded: false },
        {
          object: "Fee",
          type: "PostageFee",
          amount: rate.rate,
          charged: !billedOnScan.has(rate.carrier),
          refunded: false,
        },
      ],
      updated_at: at,
    });
    persist();
    return shipment;
  };

  /** The verifications EasyPost answers for an address: deliverable unless the stand-in's rule says not. */
  const verificationsOf = (address: {
    street1?: string | null;
    zip?: string | null;
    country?: string | null;
  }): { zip4: EasyPostVerification; delivery: EasyPostVerification } => {
    // The stand-in has no address database: a street naming "undeliverable", or the ZIP 00000,
    // is an address not found (EasyPost's own code and message for one).
    const undeliverable = /undeliverable/i.test(address.street1 ?? "") || address.zip === "00000";
    if (undeliverable) {
      const errors = [
        { code: "E.ADDRESS.NOT_FOUND", field: "address", message: "Address not found", suggestion: null },
      ];
      return {
        zip4: { success: false, errors, details: null },
        delivery: { success: false, errors, details: {} },
      };
    }
    return {
      zip4: { success: true, errors: [], details: null },
      delivery: {
        success: true,
        errors: [],
        details: { latitude: 37.7749, longitude: -122.4194, time_zone: "America/Los_Angeles" },
      },
    };
  };

  /** A US address as USPS writes it once verified (capitals, ZIP+4); others keep their spelling. */
  const normaliseAddress = (address: EasyPostAddress, at: string): EasyPostAddress => {
    const verifications = verificationsOf(address);
    if (!verifications.delivery.success || address.country !== "US") {
      return { ...address, verifications, updated_at: at };
    }
    const upper = (value: string | null) => (value === null ? null : value.toUpperCase());
    // A stable +4 from the street, so a second look at the same address gives the same ZIP+4.
    const plus4 = String(
      [...address.street1].reduce((sum, char) => (sum * 31 + char.charCodeAt(0)) % 10_000, 7),
    ).padStart(4, "0");
    return {
      ...address,
      name: upper(address.name),
      company: upper(address.company),
      street1: address.street1.toUpperCase(),
      street2: address.street2 === null ? "" : address.street2.toUpperCase(),
      city: address.city.toUpperCase(),
      state: upper(address.state),
      zip: /^\d{5}-\d{4}$/.test(address.zip) ? address.zip : `${address.zip.slice(0, 5)}-${plus4}`,
      residential: address.company === null,
      verifications,
      updated_at: at,
    };
  };

  const listShipments = (query: Record<string, unknown>) => {
    const parsed = listInput.safeParse(query);
    if (!parsed.success) {
      throw new EasyPostApiError(
        422,
        "PARAMETER.INVALID",
        "Invalid parameter.",
        parsed.error.issues.map((issue) => ({ field: issue.path.join("."), message: issue.message })),
      );
    }
    const { page_size: pageSize, before_id: beforeId, after_id: afterId } = parsed.data;
    const start = parsed.data.start_datetime ? Date.parse(parsed.data.start_datetime) : -Infinity;
    const end = parsed.data.end_datetime ? Date.parse(parsed.data.end_datetime) : Infinity;
    const newestFirst = Object.values(state.shipments).reverse();
    const indexOf = (id: string) => {
      const index = newestFirst.findIndex((shipment) => shipment.id === id);
      if (index < 0) throw notFound();
      return index;
    };
    const from = beforeId ? indexOf(beforeId) + 1 : 0;
    const to = afterId ? indexOf(afterId) : newestFirst.length;
    const matching = newestFirst.slice(from, to).filter((shipment) => {
      const created = Date.parse(shipment.created_at);
      if (created < start || created > end) return false;
      if (parsed.data.purchased === "true") return shipment.postage_label !== null;
      if (parsed.data.purchased === "false") return shipment.postage_label === null;
      return true;
    });
    return {
      shipments: matching.slice(0, pageSize).map(processRefunds),
      has_more: matching.length > pageSize,
    };
  };

  /** The carrier has scanned the parcel: past EasyPost's "label created" statuses. */
  const scanned = (shipment: EasyPostShipment): boolean => {
    const status = shipment.tracker ? (state.trackers[shipment.tracker.id] ?? shipment.tracker).status : null;
    return status !== null && status !== "unknown" && status !== "pre_transit";
  };

  /**
   * POST /shipments/:id/refund, as EasyPost documents it: the shipment comes back with
   * `refund_status` set, almost always `submitted`: the carrier decides days later (USPS: 15 to 30
   * days), `refunded`, or `rejected` when it scanned the parcel (before the request or after it),
   * and the request does not tell which. A carrier billed on scan answers `not_applicable` (a
   * label not scanned costs nothing; retrying does not change it). A repeat of a submitted or
   * refunded request changes nothing; a rejected one may be submitted again (EasyPost's advice).
   */
  const refundShipment = (idOrReference: string): EasyPostShipment => {
    const shipment = findShipment(idOrReference);
    if (!shipment.postage_label) {
      throw new EasyPostApiError(
        422,
        "SHIPMENT.REFUND.UNAVAILABLE",
        "Refund unavailable: the shipment has no postage.",
      );
    }
    const known = shipment.refund_status;
    if (known === "submitted" || known === "refunded" || known === "not_applicable") return shipment;
    const at = iso();
    if (billedOnScan.has(shipment.selected_rate?.carrier ?? "")) {
      shipment.refund_status = "not_applicable";
    } else {
      shipment.refund_status = "submitted";
      state.refundsSubmittedAt = { ...state.refundsSubmittedAt, [shipment.id]: now() };
      state.refunds = {
        ...state.refunds,
        [shipment.id]: {
          id: easyPostId("rfnd"),
          object: "Refund",
          tracking_code: shipment.tracking_code ?? "",
          confirmation_number: null,
          status: "submitted",
          carrier: shipment.selected_rate?.carrier ?? "",
          shipment_id: shipment.id,
          created_at: at,
          updated_at: at,
        },
      };
    }
    shipment.updated_at = at;
    persist();
    return shipment;
  };

  /** The carrier's decision on a submitted refund, and the `refund.successful` event saying so. */
  const decideRefund = (
    shipment: EasyPostShipment,
    decision: "refunded" | "rejected" | undefined,
  ): EasyPostEvent | undefined => {
    if (shipment.refund_status !== "submitted") return undefined;
    const status = decision ?? (scanned(shipment) ? "rejected" : "refunded");
    const at = iso();
    shipment.refund_status = status;
    if (status === "refunded") shipment.fees = shipment.fees.map((fee) => ({ ...fee, refunded: true }));
    shipment.updated_at = at;
    const refund = state.refunds?.[shipment.id];
    if (!refund) {
      persist();
      return undefined;
    }
    refund.status = status;
    refund.updated_at = at;
    // EasyPost: "A refund.successful Event is created whenever a non-instantaneous Refund request
    // is completed" (docs.easypost.com/docs/events); the stand-in reads "completed" as decided,
    // either way, and the Refund it carries says which.
    const event: EasyPostEvent = {
      id: easyPostId("evt"),
      object: "Event",
      mode: "test",
      description: "refund.successful",
      previous_attributes: { status: "submitted" },
      result: structuredClone(refund),
      status: "pending",
      pending_urls: webhookUrl ? [webhookUrl] : [],
      completed_urls: [],
      user_id: "user_sandbox",
      created_at: at,
      updated_at: at,
    };
    state.events.push(event);
    persist();
    return event;
  };

  const settleLabelRefund: EasyPostSandbox["settleLabelRefund"] = async (ref, status, settleOptions = {}) => {
    const shipment = findShipment(ref);
    const event = decideRefund(shipment, status);
    if (event && settleOptions.deliver !== false) await deliver(event);
    return shipment;
  };

  /** A submitted refund past the processing time is decided when next read (its event goes out). */
  const processRefunds = (shipment: EasyPostShipment): EasyPostShipment => {
    const submittedAt = state.refundsSubmittedAt?.[shipment.id];
    if (
      shipment.refund_status === "submitted" &&
      options.refundProcessingMs !== undefined &&
      submittedAt !== undefined &&
      now() - submittedAt >= options.refundProcessingMs
    ) {
      const event = decideRefund(shipment, undefined);
      if (event) void deliver(event);
    }
    return shipment;
  };

  /**
   * POST /addresses with `verify` (the client's Address.create({ ..., verify: true })): the address
   * comes back with `verifications` (zip4 and delivery), as EasyPost answers, 201 even when it
   * fails; with `verify_strict` a failure is a 422 ADDRESS.VERIFY.FAILURE whose items say why.
   * The stand-in's rule for "undeliverable", since it has no address database: a street naming
   * "undeliverable", or the ZIP 00000.
   */
  const createAddress = (body: unknown): EasyPostAddress => {
    const parsed = z
      .object({
        address: addressInput,
        verify: z.unknown().optional(),
        verify_strict: z.unknown().optional(),
      })
      .safeParse(body);
    if (!parsed.success) {
      const missing = (body as { address?: unknown } | null)?.address === undefined;
      throw missing
        ? new EasyPostApiError(422, "PARAMETER.REQUIRED", "Missing required parameter.", [
            { field: "address", message: "cannot be blank" },
          ])
        : new EasyPostApiError(422, "PARAMETER.INVALID", "Invalid parameter.", [
            { field: "address", message: "is invalid" },
          ]);
    }
    const input = parsed.data.address;
    const at = iso();
    // EasyPost verifies when either parameter is present, whatever its value (its guide).
    const wantsVerification = parsed.data.verify !== undefined || parsed.data.verify_strict !== undefined;
    const verifications = verificationsOf(input);
    if (!verifications.delivery.success && parsed.data.verify_strict !== undefined) {
      throw new EasyPostApiError(
        422,
        "ADDRESS.VERIFY.FAILURE",
        "Unable to verify address.",
        verifications.delivery.errors,
      );
    }
    const address: EasyPostAddress = {
      id: easyPostId("adr"),
      object: "Address",
      mode: "test",
      name: input.name ?? null,
      company: input.company ?? null,
      street1: input.street1 ?? "",
      street2: input.street2 ?? null,
      city: input.city ?? "",
      state: input.state ?? null,
      zip: input.zip ?? "",
      country: (input.country ?? "US").toUpperCase(),
      phone: input.phone ?? null,
      email: input.email ?? null,
      residential: null,
      carrier_facility: null,
      federal_tax_id: null,
      state_tax_id: null,
      verifications: {},
      created_at: at,
      updated_at: at,
    };
    return wantsVerification ? normaliseAddress(address, at) : address;
  };

  const findTracker = (ref: string): EasyPostTracker => {
    const direct = state.trackers[ref] ?? Object.values(state.trackers).find((t) => t.tracking_code === ref);
    if (direct) return direct;
    const shipment = findShipment(ref);
    if (!shipment.tracker)
      throw new EasyPostApiError(404, "NOT_FOUND", `Shipment ${shipment.id} has no tracker yet.`);
    return state.trackers[shipment.tracker.id] ?? shipment.tracker;
  };

  const signedDelivery = (event: EasyPostEvent) => {
    const body = JSON.stringify(event);
    return { body, signature: easyPostWebhookSignature(body, options.webhookSecret) };
  };

  const deliver = async (event: EasyPostEvent): Promise<EasyPostDelivery> => {
    const result: EasyPostDelivery = {
      eventId: event.id,
      trackingCode: event.result.tracking_code,
      status: event.result.status,
      responseStatus: 0,
    };
    if (!webhookUrl) {
      result.error = "no webhook URL";
    } else {
      const { body, signature } = signedDelivery(event);
      try {
        const res = await fetch(webhookUrl, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hmac-signature": signature },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        result.responseStatus = res.status;
        await res.arrayBuffer();
      } catch (error) {
        result.error = error instanceof Error ? error.message : String(error);
      }
    }
    event.status = result.responseStatus >= 200 && result.responseStatus < 300 ? "completed" : "failed";
    deliveries.push(result);
    persist();
    return result;
  };

  const advanceTracker: EasyPostSandbox["advanceTracker"] = async (ref, status, advanceOptions = {}) => {
    const tracker = findTracker(ref);
    const next =
      status ??
      happyPath[Math.min(happyPath.indexOf(tracker.status) + 1, happyPath.length - 1)] ??
      "pre_transit";
    const previous = tracker.status;
    const at = iso();
    const shipment = state.shipments[tracker.shipment_id];
    tracker.status = next;
    tracker.status_detail = next === "delivered" ? "arrived_at_destination" : "status_update";
    tracker.updated_at = at;
    // EasyPost stops following a parcel delivered or back with its sender.
    tracker.finalized = next === "delivered" || next === "return_to_sender";
    tracker.tracking_details.push({
      object: "TrackingDetail",
      message: statusMessages[next],
      description: "",
      status: next,
      status_detail: tracker.status_detail,
      datetime: at,
      source: tracker.carrier,
      carrier_code: "",
      tracking_location: {
        object: "TrackingLocation",
        city: shipment?.to_address.city ?? null,
        state: shipment?.to_address.state ?? null,
        country: shipment?.to_address.country ?? null,
        zip: shipment?.to_address.zip ?? null,
      },
    });
    if (shipment) {
      shipment.status = next;
      shipment.tracker = tracker;
      // A carrier billed on scan charges the postage now. (A label refund still waiting is not
      // decided by the scan: the carrier rejects it when it processes it, days later.)
      if (scanned(shipment) && billedOnScan.has(tracker.carrier)) {
        shipment.fees = shipment.fees.map((fee) =>
          fee.type === "PostageFee" ? { ...fee, charged: true } : fee,
        );
      }
    }
    const event: EasyPostEvent = {
      id: easyPostId("evt"),
      object: "Event",
      mode: "test",
      description: "tracker.updated",
      previous_attributes: { status: previous },
      result: structuredClone(tracker),
      status: "pending",
      pending_urls: webhookUrl ? [webhookUrl] : [],
      completed_urls: [],
      user_id: "user_sandbox",
      created_at: at,
      updated_at: at,
    };
    state.events.push(event);
    persist();
    const delivery = advanceOptions.deliver === false ? undefined : await deliver(event);
    return { tracker, event, ...(delivery ? { delivery } : {}) };
  };

  const app = express();
  app.disable("x-powered-by");
  const api = express.Router();
  api.use(express.json({ limit: "1mb" }));
  api.use((req, _res, next) => {
    // The client sends the API key as HTTP Basic username (superagent's auth(key)).
    const header = req.get("authorization") ?? "";
    const key = header.startsWith("Basic ")
      ? Buffer.from(header.slice(6), "base64").toString("utf8").split(":")[0]
      : "";
    if (!key) {
      next(new EasyPostApiError(401, "APIKEY.REQUIRED", "No API key was supplied."));
      return;
    }
    next();
  });

  /** Runs an API call under the failure rules, and logs it. */
  const handle =
    (endpoint: EasyPostSandboxEndpoint, status: number, action: (req: Request) => unknown) =>
    async (req: Request, res: Response) => {
      const log = (code: number) =>
        requests.push({ endpoint, method: req.method, path: req.originalUrl, status: code, at: now() });
      const failure = takeFailure(endpoint);
      const answer = (run: boolean) => {
        try {
          const result = run ? action(req) : undefined;
          log(status);
          return () => res.status(status).json(result);
        } catch (error) {
          if (error instanceof EasyPostApiError) {
            log(error.status);
            return () =>
              res
                .status(error.status)
                .json({ error: { code: error.code, message: error.message, errors: error.errors } });
          }
          throw error;
        }
      };
      if (failure?.kind === "server_error") {
        log(500);
        res.status(500).json({
          error: { code: "INTERNAL_SERVER_ERROR", message: "Something went wrong on our end.", errors: [] },
        });
        return;
      }
      if (failure?.kind === "rate_limited") {
        log(429);
        res.status(429).json({
          error: { code: "RATE_LIMITED", message: "You have exceeded the rate limit.", errors: [] },
        });
        return;
      }
      if (failure?.kind === "delay" || failure?.kind === "hang" || failure?.kind === "held") {
        const send = failure.afterProcessing ? answer(true) : undefined;
        if (failure.kind === "hang") {
          hanging.add(res);
          res.on("close", () => hanging.delete(res));
          return;
        }
        if (failure.kind === "held") await failure.until.catch(() => undefined);
        else await new Promise((resolve) => setTimeout(resolve, failure.ms));
        if (res.destroyed) return;
        (send ?? answer(true))();
        return;
      }
      answer(true)();
    };

  api.post(
    "/shipments",
    handle("shipments.create", 201, (req) => createShipment(req.body)),
  );
  // EasyPost's GET /v2/shipments: newest first, `page_size` (default 20, at most 100), `before_id`
  // (older than that shipment: the client's getNextPage), `after_id`, `start_datetime` and
  // `end_datetime` (ISO 8601, on created_at), `purchased`; answers { shipments, has_more }.
  api.get(
    "/shipments",
    handle("shipments.list", 200, (req) => listShipments(req.query as Record<string, unknown>)),
  );
  api.get(
    "/shipments/:id",
    handle("shipments.retrieve", 200, (req) => processRefunds(findShipment(String(req.params.id)))),
  );
  api.post(
    "/addresses",
    handle("addresses.create", 201, (req) => createAddress(req.body)),
  );
  api.post(
    "/shipments/:id/refund",
    handle("shipments.refund", 200, (req) => refundShipment(String(req.params.id))),
  );
  api.post(
    "/shipments/:id/buy",
    handle("shipments.buy", 200, (req) => buyShipment(String(req.params.id), req.body)),
  );
  api.get(
    "/trackers/:id",
    handle("trackers.retrieve", 200, (req) => findTracker(String(req.params.id))),
  );
  api.use((_req, _res, next) => next(notFound()));

  const control = express.Router();
  control.use(express.json({ limit: "100kb" }));
  control.post("/failures", (req, res) => {
    const input = failureInput.parse(req.body ?? {});
    const failure: EasyPostInjectedFailure =
      input.kind === "delay"
        ? { kind: "delay", ms: input.ms ?? 1_000, afterProcessing: input.afterProcessing ?? false }
        : input.kind === "hang"
          ? { kind: "hang", afterProcessing: input.afterProcessing ?? false }
          : { kind: input.kind };
    rules.push({ endpoint: input.endpoint, failure, remaining: input.times ?? 1 });
    res.status(201).json({ pending: rules });
  });
  control.get("/failures", (_req, res) => {
    res.json({ pending: rules });
  });
  control.delete("/failures", (_req, res) => {
    rules = [];
    res.json({ pending: [] });
  });
  control.post("/trackers/:ref/advance", async (req, res) => {
    const input = advanceInput.parse(req.body ?? {});
    res.json(await advanceTracker(String(req.params.ref), input.status, { deliver: input.deliver ?? true }));
  });
  control.get("/events/:id/signed", (req, res) => {
    const event = state.events.find((candidate) => candidate.id === req.params.id);
    if (!event) throw notFound();
    res.json(signedDelivery(event));
  });
  control.post("/shipments/:ref/refund/settle", async (req, res) => {
    const input = z
      .object({ status: z.enum(["refunded", "rejected"]).optional(), deliver: z.boolean().optional() })
      .parse(req.body ?? {});
    res.json(
      await settleLabelRefund(String(req.params.ref), input.status, { deliver: input.deliver ?? true }),
    );
  });
  control.get("/shipments", (_req, res) => {
    res.json({ shipments: Object.values(state.shipments) });
  });
  control.get("/deliveries", (_req, res) => {
    res.json({ deliveries });
  });
  control.get("/labels/:file", (req, res) => {
    const id = String(req.params.file).replace(/\.png$/, "");
    if (!state.shipments[id]?.postage_label) throw notFound();
    // A 1x1 PNG: enough for a browser or a printer test page to open something.
    res
      .type("png")
      .send(
        Buffer.from(
          "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
          "base64",
        ),
      );
  });

  app.use("/v2", api);
  app.use("/_sandbox", control);
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof EasyPostApiError) {
      res
        .status(error.status)
        .json({ error: { code: error.code, message: error.message, errors: error.errors } });
    } else if (error instanceof z.ZodError) {
      res
        .status(400)
        .json({ error: { code: "PARAMETER.INVALID", message: z.prettifyError(error), errors: [] } });
    } else {
      logger.error({ err: error }, "EasyPost stand-in error");
      res.status(500).json({
        error: { code: "INTERNAL_SERVER_ERROR", message: "Something went wrong on our end.", errors: [] },
      });
    }
  });

  return {
    app,
    get url() {
      return url;
    },
    get apiBase() {
      return url ? `${url}/v2/` : undefined;
    },
    async listen(port, host = "127.0.0.1") {
      ({ server, url } = await listenOn(app, port, host));
      logger.info({ url }, "EasyPost stand-in listening");
      return { url };
    },
    async close() {
      for (const res of hanging) res.destroy();
      hanging.clear();
      if (server) {
        const closing = server;
        server = undefined;
        closing.closeAllConnections();
        await new Promise<void>((resolve, reject) =>
          closing.close((error) => (error ? reject(error) : resolve())),
        );
      }
    },
    setWebhookUrl: (next) => {
      webhookUrl = next;
    },
    setBilledOnScan: (carriers) => {
      billedOnScan = new Set(carriers);
    },
    injectFailure: (endpoint, failure, times = 1) => {
      rules.push({ endpoint, failure, remaining: times });
    },
    clearFailures: () => {
      rules = [];
    },
    advanceTracker,
    signedDelivery: (eventId) => {
      const event = state.events.find((candidate) => candidate.id === eventId);
      if (!event) throw new Error(`No event ${eventId}`);
      return signedDelivery(event);
    },
    shipments: () => Object.values(state.shipments),
    events: () => state.events,
    settleLabelRefund,
    purchased: () => Object.values(state.shipments).filter((s) => s.postage_label !== null),
    requests,
    deliveries,
  };
}
