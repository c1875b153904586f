import { apiError, toEasyPostAddress, type EasyPost, type WarehouseAddress } from "./easypost-carrier";
import type { RateDestination, ShippingQuote } from "./rate-table";

/**
 * Live carrier rates at checkout (issue 39, decision 0203): when the destination is known before
 * payment, EasyPost's rates for the order's parcel plan, of which the shop's policy keeps a few
 * (the cheapest, the fastest), marked up and rounded as the shop says. The options carry the
 * carrier and service (the label is bought at the one chosen, as for the rate table's
 * `carrierService`). The rate table stays the fallback (src/orders/checkout/checkout-service.ts).
 */

export type LiveRatePick = "cheapest" | "fastest";

export interface LiveRatePolicy {
  /** Which rates to offer, in this order (the first is preselected at Checkout). */
  picks: readonly LiveRatePick[];
  /** Added to the carrier's price, in percent. */
  markupPercent: number;
  /** The marked-up price rounded up to a multiple of this many minor units (1: no rounding). */
  roundUpTo: number;
}

/** One carrier service's price for the whole order (every parcel), as EasyPost quoted it. */
export interface CarrierRate {
  carrier: string;
  service: string;
  /** Minor units, every parcel added up. */
  amount: number;
  /** Lowercase ISO, as Stripe spells it. */
  currency: string;
  /** EasyPost's `delivery_days` (the slowest parcel's); null when the carrier gives none. */
  deliveryDays: number | null;
}

/** Asks the carrier for rates; [] when it rates nothing for the destination, throws when it cannot be asked. */
export interface LiveRateQuoter {
  quote(to: RateDestination, parcels: readonly { weightOz: number }[]): Promise<CarrierRate[]>;
}

/** The carrier cannot be asked (down, slow, refusing us): the checkout offers the rate table. */
export class LiveRatesUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "LiveRatesUnavailable";
  }
}

/** CHECKOUT_LIVE_RATES: `off`, or picks separated by commas (the config module checked the words). */
export function livePicksOf(setting: string): LiveRatePick[] {
  if (setting === "off") return [];
  return [...new Set(setting.split(",") as LiveRatePick[])];
}

/** The shop's price for a carrier's: marked up, then rounded up (never below the carrier's). */
export function priceLiveRate(amount: number, policy: Pick<LiveRatePolicy, "markupPercent" | "roundUpTo">) {
  // Whole minor units, rounded up: a fraction of a cent of markup is still the shop's.
  const marked = Math.ceil((amount * (100 + policy.markupPercent)) / 100 - 1e-9);
  return Math.ceil(marked / policy.roundUpTo) * policy.roundUpTo;
}

/** Stable per carrier and service, so the option a customer chose is named the same on every quote. */
export const liveRateId = (carrier: string, service: string): string =>
  `live-${carrier}-${service}`.toLowerCase().replace(/[^a-z0-9_-]+/g, "-");

const byPrice = (a: CarrierRate, b: CarrierRate) =>
  a.amount - b.amount ||
  (a.deliveryDays ?? Infinity) - (b.deliveryDays ?? Infinity) ||
  compare(`${a.carrier} ${a.service}`, `${b.carrier} ${b.service}`);
const bySpeed = (a: CarrierRate, b: CarrierRate) =>
  (a.deliveryDays ?? Infinity) - (b.deliveryDays ?? Infinity) || byPrice(a, b);
const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The options the policy keeps, as shipping quotes (the checkout's shape for the rate table's
 * too): each pick once, in the policy's order; a rate both cheapest and fastest is offered once.
 * Only rates in the order's currency (Stripe prices shipping in the session's); none kept: [].
 * Pure: the same rates and policy give the same options.
 */
export function offerLiveRates(
  rates: readonly CarrierRate[],
  policy: LiveRatePolicy,
  currency: string,
): ShippingQuote[] {
  const usable = rates.filter((rate) => rate.currency === currency.toLowerCase() && rate.amount >= 0);
  if (usable.length === 0) return [];
  const chosen: CarrierRate[] = [];
  for (const pick of policy.picks) {
    const best = [...usable].sort(pick === "cheapest" ? byPrice : bySpeed)[0];
    if (best && !chosen.includes(best)) chosen.push(best);
  }
  return chosen.map((rate) => ({
    rateId: liveRateId(rate.carrier, rate.service),
    zone: "live",
    displayName: `${rate.carrier} ${rate.service}`,
    amount: priceLiveRate(rate.amount, policy),
    currency: currency.toLowerCase(),
    deliveryEstimate:
      rate.deliveryDays !== null && rate.deliveryDays > 0
        ? {
            minimum: { unit: "business_day" as const, value: rate.deliveryDays },
            maximum: { unit: "business_day" as const, value: rate.deliveryDays },
          }
        : null,
    carrierService: { carrier: rate.carrier, service: rate.service },
  }));
}

/**
 * EasyPost's rates, through the same client as the labels: one rating Shipment per parcel
 * (`POST /v2/shipments`, which answers with `rates`; a shipment never bought costs nothing and
 * carries no reference, so no label lookup ever finds it). The destination is what checkout knows
 * before payment (country, region, postal code): enough for EasyPost to rate, not to buy. A
 * service is offered only when every parcel has a rate for it; its price is the parcels' sum.
 *
 * EasyPost's 400/422 about the request (an address it cannot rate): no rates, []. Anything else
 * (5xx, 429, 401/403, a timeout, the network) is LiveRatesUnavailable.
 */
export function createEasyPostRateQuoter(options: {
  client: () => Promise<EasyPost>;
  warehouse: WarehouseAddress;
  box?: { lengthIn: number; widthIn: number; heightIn: number } | undefined;
}): LiveRateQuoter {
  return {
    async quote(to, parcels) {
      if (parcels.length === 0) return [];
      let client: EasyPost;
      try {
        client = await options.client();
      } catch (error) {
        throw new LiveRatesUnavailable("the EasyPost client could not be made", { cause: error });
      }
      // The parcels are rated side by side: the customer waits at checkout for the slowest one, not
      // for all of them in turn. null: EasyPost cannot rate that parcel there.
      const rateParcel = async (parcel: (typeof parcels)[number]): Promise<CarrierRate[] | null> => {
        let shipment;
        try {
          shipment = await client.Shipment.create({
            to_address: {
              country: to.country,
              ...(to.region ? { state: to.region } : {}),
              ...(to.postalCode ? { zip: to.postalCode } : {}),
            },
            from_address: toEasyPostAddress(options.warehouse),
            parcel: {
              weight: parcel.weightOz,
              ...(options.box
                ? { length: options.box.lengthIn, width: options.box.widthIn, height: options.box.heightIn }
                : {}),
            },
          });
        } catch (error) {
          const status = apiError(error).statusCode;
          // 400/422: EasyPost refuses the request itself (an address it cannot rate). A 401, 403 or
          // 429 says nothing about the destination: the carrier is unavailable to us.
          if (status === 400 || status === 422) return null;
          throw new LiveRatesUnavailable(
            `EasyPost could not be asked for rates${status ? ` (${status})` : ""}`,
            { cause: error },
          );
        }
        return (shipment.rates ?? []).flatMap((rate) => {
          const amount = Math.round(Number(rate.rate) * 100);
          if (!Number.isFinite(amount)) return [];
          const days = rate.delivery_days ?? rate.est_delivery_days ?? null;
          return [
            {
              carrier: rate.carrier,
              service: rate.service,
              amount,
              currency: String(rate.currency ?? "USD").toLowerCase(),
              deliveryDays: typeof days === "number" ? days : null,
            },
          ];
        });
      };
      const rated = await Promise.all(parcels.map(rateParcel));
      if (rated.some((rates) => rates === null)) return [];
      const perParcel = rated as CarrierRate[][];
      return combine(perParcel);
    },
  };
}

/** Services every parcel has a rate for: their prices added, the slowest parcel's days. */
function combine(perParcel: readonly CarrierRate[][]): CarrierRate[] {
  const [first, ...rest] = perParcel;
  if (!first) return [];
  const key = (rate: CarrierRate) => `${rate.carrier}\u0000${rate.service}\u0000${rate.currency}`;
  // The cheapest quote of a service per parcel (a carrier may quote one service twice, by account).
  const cheapestOf = (rates: readonly CarrierRate[]) => {
    const byKey = new Map<string, CarrierRate>();
    for (const rate of rates) {
      const seen = byKey.get(key(rate));
      if (!seen || rate.amount < seen.amount) byKey.set(key(rate), rate);
    }
    return byKey;
  };
  const others = rest.map(cheapestOf);
  return [...cheapestOf(first).values()].flatMap((rate) => {
    const matches = others.map((rates) => rates.get(key(rate)));
    if (matches.some((match) => match === undefined)) return [];
    const all = [rate, ...(matches as CarrierRate[])];
    const days = all.map((each) => each.deliveryDays);
    return [
      {
        ...rate,
        amount: all.reduce((sum, each) => sum + each.amount, 0),
        deliveryDays: days.some((d) => d === null) ? null : Math.max(...(days as number[])),
      },
    ];
  });
}
