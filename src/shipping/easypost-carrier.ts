import http from "node:http";
import https from "node:https";
import type EasyPostClient from "@easypost/api";
import type { CarrierShipmentIds } from "./carrier-shipment-ids";
import {
  firstParcel,
  type ParcelKey,
  type AddressVerdict,
  type ChosenService,
  type CarrierBooking,
  type LabelRefundStatus,
  type ShipmentRequest,
  type ShippingAddress,
  type ShippingProvider,
  type VoidOutcome,
} from "./shipping-provider";

export const easyPostCarrierName = "easypost";

export interface WarehouseAddress extends ShippingAddress {
  name: string;
}

/**
 * The EasyPost shipment's `reference` for an order's parcel: how a retry finds what an earlier
 * attempt made. Parcel 1's first label keeps the reference every order had before orders had
 * several parcels (`order-<id>`), so bookings made before stay found; parcel n is
 * `order-<id>-<n>`, and its g-th re-ship `order-<id>-<n>-reship-<g>`.
 */
export const easyPostReference = (orderId: string, parcel: ParcelKey = firstParcel): string =>
  `order-${orderId}${parcel.parcelNumber === 1 && parcel.generation === 0 ? "" : `-${parcel.parcelNumber}`}${
    parcel.generation === 0 ? "" : `-reship-${parcel.generation}`
  }`;

export type EasyPost = InstanceType<typeof EasyPostClient>;

/**
 * The official client. `baseUrl` points it at the EasyPost stand-in offline (EASYPOST_API_BASE,
 * e.g. http://127.0.0.1:12112/v2/); unset means https://api.easypost.com/v2/.
 *
 * The timeout is applied through `requestMiddleware` because @easypost/api 8.9 accepts a `timeout`
 * option but never hands it to superagent (a hung call would wait forever). 15 s: every call sits
 * in a workflow step that retries durably, and a retry looks the shipment up first.
 *
 * The same middleware hands superagent a keep-alive agent: superagent's default is `agent: false`,
 * a new connection (against api.easypost.com a new TLS handshake) for every call, four or more
 * per order. The agent keeps idle sockets 4 s (EasyPost's load balancers keep them longer), and a
 * call on a socket the server closed meanwhile fails like any network error, which the step's
 * retry covers (a retry looks the shipment up first).
 *
 * The library is loaded on first use (see easyPostLibrary).
 */
export async function createEasyPostClient(options: {
  apiKey: string;
  apiBase?: string;
  timeoutMs?: number;
}): Promise<EasyPost> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const Client = await easyPostLibrary();
  const agentOptions = { keepAlive: true, timeout: 4_000 };
  const agent = options.apiBase?.startsWith("http:")
    ? new http.Agent(agentOptions)
    : new https.Agent(agentOptions);
  return new Client(options.apiKey, {
    timeout: timeoutMs,
    requestMiddleware: (request: {
      timeout(ms: { response: number; deadline: number }): unknown;
      agent(agent: http.Agent): unknown;
    }) => {
      request.agent(agent);
      return request.timeout({ response: timeoutMs, deadline: timeoutMs });
    },
    ...(options.apiBase
      ? { baseUrl: options.apiBase.endsWith("/") ? options.apiBase : `${options.apiBase}/` }
      : {}),
  });
}

let library: Promise<typeof EasyPostClient> | undefined;

/**
 * @easypost/api takes about 0.4 s to load (it bundles its HTTP stack and every model). Loading it
 * when the first booking or carrier event needs it keeps that off the start-up path, where a
 * restarting replica is not answering webhooks.
 */
export function easyPostLibrary(): Promise<typeof EasyPostClient> {
  // The package sets module.exports to the client class, which is what `default` is at runtime
  // (native import of CommonJS, and Jest's require); its .d.ts describes an ES default export.
  library ??= import("@easypost/api").then((module) => module.default as unknown as typeof EasyPostClient);
  return library;
}

/** One client per process, made on first use. */
export function lazyEasyPostClient(
  options: Parameters<typeof createEasyPostClient>[0],
): () => Promise<EasyPost> {
  let client: Promise<EasyPost> | undefined;
  return () => {
    client ??= createEasyPostClient(options);
    return client;
  };
}

/** A label cannot be bought and retrying will not change that (no rate of the service level). */
export class ShippingUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ShippingUnavailableError";
  }
}

interface ApiErrorShape {
  statusCode?: number;
  code?: string;
}
export const apiError = (error: unknown): ApiErrorShape =>
  typeof error === "object" && error !== null ? (error as ApiErrorShape) : {};

/** An address as EasyPost's API takes it (shipments and return labels alike). */
export function toEasyPostAddress(address: ShippingAddress) {
  return {
    name: address.name ?? null,
    street1: address.line1,
    street2: address.line2 ?? null,
    city: address.city,
    state: address.state ?? null,
    zip: address.postalCode,
    country: address.country,
    phone: address.phone ?? null,
  };
}

type Shipment = Awaited<ReturnType<EasyPost["Shipment"]["retrieve"]>>;

/**
 * The Shipment with this reference (EasyPost takes a reference in place of the id), or null: how
 * every label, outbound or return, is found again before anything is created or bought.
 */
export async function findShipmentByReference(client: EasyPost, reference: string): Promise<Shipment | null> {
  try {
    return await client.Shipment.retrieve(reference);
  } catch (error) {
    if (apiError(error).statusCode === 404) return null;
    throw error;
  }
}

/**
 * The shipment a label reference is bought on (decision 0185): the id recorded before an earlier
 * buy when there is one (EasyPost's `reference` is not unique, the id is), else the shipment the
 * reference finds (an earlier attempt's create whose answer was lost), else null (create one).
 */
export async function shipmentToBuy(
  client: EasyPost,
  ids: CarrierShipmentIds | undefined,
  reference: string,
): Promise<Shipment | null> {
  const recorded = await ids?.recorded(reference);
  if (recorded) return client.Shipment.retrieve(recorded);
  return findShipmentByReference(client, reference);
}

/**
 * Records `shipment` as the one this reference's label is bought on, unless another attempt
 * recorded one first (its lookup and ours both missed, and each created a shipment): then that
 * one is bought, and ours stays unbought (an unbought shipment costs nothing).
 */
export async function claimShipment(
  client: EasyPost,
  ids: CarrierShipmentIds | undefined,
  reference: string,
  shipment: Shipment,
): Promise<Shipment> {
  if (!ids) return shipment;
  const winner = await ids.claim(reference, shipment.id);
  return winner === shipment.id ? shipment : client.Shipment.retrieve(winner);
}

/** The customer's chosen service beside the label bought: at that service, or the fallback. */
function chosenOf(chosen: ChosenService, booking: CarrierBooking): ChosenService & { matched: boolean } {
  const matched =
    chosen.service !== undefined &&
    booking.service === chosen.service &&
    (!chosen.carrier || booking.carrier === chosen.carrier);
  return { ...chosen, matched };
}

/**
 * An outbound parcel's booking; for an order whose customer chose a shipping option, with that
 * option beside the label's service and cost (create-shipment records the two side by side).
 */
function withChosen(shipment: Shipment, chosen: ChosenService | null | undefined): CarrierBooking {
  const booking = bookingOfShipment(shipment);
  if (!chosen) return booking;
  return { ...booking, chosen: chosenOf(chosen, booking) };
}

/** A bought Shipment as we record it (outbound parcel, return label or exchange alike). */
export function bookingOfShipment(shipment: Shipment): CarrierBooking {
  if (!shipment.postage_label || !shipment.tracking_code) {
    throw new Error(`EasyPost shipment ${shipment.id} has no label yet`);
  }
  return {
    carrier: shipment.selected_rate?.carrier ?? easyPostCarrierName,
    service: shipment.selected_rate?.service ?? null,
    trackingNumber: shipment.tracking_code,
    trackingUrl:
      shipment.tracker?.public_url ?? `https://www.easypost.com/tracking/${shipment.tracking_code}`,
    labelUrl: shipment.postage_label.label_url,
    providerId: shipment.id,
    ...labelCostOf(shipment.selected_rate),
  };
}

/** What the label cost, from the rate EasyPost bought (minor units, lowercase currency as Stripe's). */
function labelCostOf(rate: { rate?: string | null; currency?: string | null } | null | undefined) {
  const amount = rate?.rate ? Math.round(Number(rate.rate) * 100) : Number.NaN;
  return Number.isFinite(amount)
    ? { labelAmount: amount, labelCurrency: (rate?.currency ?? "USD").toLowerCase() }
    : { labelAmount: null, labelCurrency: null };
}

/**
 * Books parcels through EasyPost: one Shipment per parcel of an order (its reference says which), from the warehouse to the customer,
 * bought at the cheapest rate among the configured service levels.
 *
 * Exactly once across retries, crashes and attempts racing (decision 0185): a label is bought only
 * on the shipment whose id is recorded first for its reference (`shipmentIds`), so every attempt
 * asks for that id, and, with none recorded, for the reference (which EasyPost accepts in place of
 * an id, but does not keep unique). Found and bought: that booking is returned. Found, not bought
 * (an earlier attempt's create answered but lost): it is claimed and bought now. Not found: one is
 * created, claimed (a racing attempt's claim may win: its shipment is bought instead), then
 * bought. A buy whose answer was lost is found bought, by id, by the next attempt; two buys of the
 * claimed shipment meet EasyPost's refusal (SHIPMENT.POSTAGE.EXISTS), and the label already bought
 * is read back. Nothing buys twice.
 */
export function createEasyPostCarrier(options: {
  client: () => Promise<EasyPost>;
  warehouse: WarehouseAddress;
  /** Acceptable service names, e.g. ["GroundAdvantage", "Ground"]: the cheapest of these is bought. */
  serviceLevels: readonly string[];
  /** Weight per item, in ounces, of a product the catalog has no weight for. */
  itemWeightOz: number;
  /** The box every parcel goes in (inches), when the shop uses one; EasyPost rates by weight alone without. */
  box?: { lengthIn: number; widthIn: number; heightIn: number };
  /** Where the shipment each label is bought on is recorded before the buy (decision 0185). */
  shipmentIds?: CarrierShipmentIds;
}): ShippingProvider {
  const { warehouse, serviceLevels, itemWeightOz, box, shipmentIds } = options;

  const byPrice = <T extends { rate: string }>(rates: T[]): T[] =>
    rates.sort((a, b) => Number(a.rate) - Number(b.rate));
  /**
   * The rate the customer's chosen service names (its carrier too, when named), else the cheapest
   * of the shop's service levels: the fallback (docs/checkout.md), told to ops by create-shipment.
   */
  const buy = async (
    client: EasyPost,
    shipment: Shipment,
    chosen?: ChosenService | null,
  ): Promise<Shipment> => {
    const wanted = chosen?.service
      ? byPrice(
          (shipment.rates ?? []).filter(
            (rate) => rate.service === chosen.service && (!chosen.carrier || rate.carrier === chosen.carrier),
          ),
        )[0]
      : undefined;
    const candidates = (shipment.rates ?? []).filter((rate) => serviceLevels.includes(rate.service));
    const cheapest = wanted ?? byPrice(candidates)[0];
    if (!cheapest) {
      const offered = (shipment.rates ?? []).map((rate) => `${rate.carrier} ${rate.service}`).join(", ");
      throw new ShippingUnavailableError(
        `EasyPost shipment ${shipment.id}: no rate for ${serviceLevels.join("/")} (offered: ${offered || "none"})`,
      );
    }
    try {
      return await client.Shipment.buy(shipment.id, cheapest.id);
    } catch (error) {
      if (apiError(error).code === "SHIPMENT.POSTAGE.EXISTS") return client.Shipment.retrieve(shipment.id);
      throw error;
    }
  };

  return {
    async createShipment(request: ShipmentRequest) {
      const client = await options.client();
      const reference = easyPostReference(request.orderId, request.parcel);
      let shipment = await shipmentToBuy(client, shipmentIds, reference);
      if (shipment?.postage_label) return withChosen(shipment, request.chosen);
      if (!shipment) {
        if (!request.address) {
          throw new ShippingUnavailableError(`order ${request.orderId} has no shipping address`);
        }
        const items = request.lines.reduce((sum, line) => sum + line.quantity, 0);
        if (items === 0) throw new ShippingUnavailableError(`order ${request.orderId}: nothing to ship`);
        shipment = await client.Shipment.create({
          reference,
          to_address: toEasyPostAddress(request.address),
          from_address: toEasyPostAddress(warehouse),
          parcel: {
            // The sum of the lines: each unit at its catalog weight, or the default.
            weight: request.lines.reduce(
              (sum, line) => sum + line.quantity * (line.weightOz ?? itemWeightOz),
              0,
            ),
            ...(box ? { length: box.lengthIn, width: box.widthIn, height: box.heightIn } : {}),
          },
          options: { label_format: "PNG", print_custom_1: reference },
        });
      }
      shipment = await claimShipment(client, shipmentIds, reference, shipment);
      return withChosen(
        shipment.postage_label ? shipment : await buy(client, shipment, request.chosen),
        request.chosen,
      );
    },

    /**
     * Hands the label back: POST /shipments/:id/refund (the client's Shipment.refund). EasyPost
     * answers with the shipment's refund_status, usually `submitted`; the carrier decides later.
     * Asking again for a submitted or refunded label changes nothing (read first, so a retried
     * step sends no second request); a rejected one is asked again, as EasyPost advises for a
     * refund rejected right after the label was bought.
     */
    async voidShipment(orderId: string, _trackingNumber: string, parcel?: ParcelKey): Promise<VoidOutcome> {
      const client = await options.client();
      // The shipment the label was bought on: by its recorded id first (decision 0185).
      const shipment = await shipmentToBuy(client, shipmentIds, easyPostReference(orderId, parcel));
      if (!shipment?.postage_label) return "not-found";
      const known = refundStatusOf(shipment);
      if (known === "submitted" || known === "refunded" || known === "not_applicable") return known;
      try {
        const refunded = await client.Shipment.refund(shipment.id);
        return refundStatusOf(refunded) ?? "not-voidable";
      } catch (error) {
        // 4xx: EasyPost refuses to refund this label at all (bill-on-scan carriers, say).
        const status = apiError(error).statusCode;
        if (status !== undefined && status >= 400 && status < 500 && status !== 429) return "not-voidable";
        throw error;
      }
    },

    /**
     * Address.create with `verify: true`: EasyPost answers 200 with `verifications.delivery`
     * (success, and the errors that say why not), so a failed verification is an answer, not an error.
     */
    async verifyAddress(address: ShippingAddress): Promise<AddressVerdict> {
      const client = await options.client();
      const verified = (await client.Address.create({ ...toEasyPostAddress(address), verify: true })) as {
        verifications?: { delivery?: { success?: boolean; errors?: { message?: string }[] } };
      };
      const delivery = verified.verifications?.delivery;
      if (!delivery || delivery.success !== false) return { deliverable: true };
      const message = (delivery.errors ?? [])
        .map((error) => error.message)
        .filter(Boolean)
        .join("; ");
      return { deliverable: false, message: message || "The carrier cannot deliver to this address" };
    },

    async labelRefundStatus(orderId: string, parcel?: ParcelKey): Promise<LabelRefundStatus | null> {
      const client = await options.client();
      // The shipment the label was bought on: by its recorded id first (decision 0185).
      const shipment = await shipmentToBuy(client, shipmentIds, easyPostReference(orderId, parcel));
      return shipment ? refundStatusOf(shipment) : null;
    },
  };
}

/** EasyPost's refund_status, narrowed (anything new reads as unknown). */
export function refundStatusOf(shipment: { refund_status?: string | null }): LabelRefundStatus | null {
  const status = shipment.refund_status;
  return status === "submitted" ||
    status === "refunded" ||
    status === "rejected" ||
    status === "not_applicable"
    ? status
    : null;
}
