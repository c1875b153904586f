import { z } from "zod";

/**
 * The shop's own shipping rates, offered at Checkout as `shipping_options` when no live carrier
 * quote is asked for (issue 39). Pure: no I/O, no clock, so the same table, destination and
 * order always give the same options, offline too.
 *
 * A table is a list of zones. A zone covers destinations (a country, optionally narrowed to
 * regions, i.e. states or provinces, and/or postal-code prefixes) and offers one or more rates.
 * The most specific zone that covers the destination wins (postal prefix over region over
 * country), so "US" and "US: AK, HI" can price differently; ties go to the zone listed first.
 *
 * A rate is priced one of two ways:
 * - `flat`: one amount per order;
 * - `weight_band`: per parcel of the order's parcel plan (src/shipping/parcel-plan.ts), the first
 *   band whose `upToOz` holds the parcel's weight; a parcel heavier than every band means the
 *   rate is not offered for this order (the shop has no price for it).
 * `freeOverAmount` makes the rate free when the order's merchandise subtotal reaches it.
 */

const amount = z.number().int().min(0);
const estimateBound = z.object({
  unit: z.enum(["business_day", "day", "hour", "week", "month"]),
  value: z.number().int().positive(),
});

const destination = z
  .object({
    country: z.string().regex(/^[A-Z]{2}$/, "a two-letter ISO country code in capitals"),
    regions: z.array(z.string().min(1)).min(1).optional(),
    postalPrefixes: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();

const pricing = z.discriminatedUnion("type", [
  z.object({ type: z.literal("flat"), amount }).strict(),
  z
    .object({
      type: z.literal("weight_band"),
      bands: z
        .array(z.object({ upToOz: z.number().positive(), amount }).strict())
        .min(1)
        .refine(
          (bands) =>
            bands.every((band, i) => i === 0 || band.upToOz > (bands[i - 1] as { upToOz: number }).upToOz),
          "bands must be listed by increasing upToOz",
        ),
    })
    .strict(),
]);

const rate = z
  .object({
    /** Stable, so the option a customer chose can be named later (metadata on the Checkout option). */
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, "lowercase letters, digits, - and _"),
    displayName: z.string().min(1).max(100),
    pricing,
    freeOverAmount: amount.optional(),
    deliveryEstimate: z.object({ minimum: estimateBound, maximum: estimateBound }).strict().optional(),
    /**
     * The carrier service the label is bought at when the customer chooses this rate (EasyPost's
     * names: `{ "carrier": "USPS", "service": "Priority" }`); unset, the cheapest of
     * SHIPPING_SERVICE_LEVELS, as for every order before.
     */
    carrierService: z
      .object({ carrier: z.string().min(1).optional(), service: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict();

export const rateTableSchema = z
  .object({
    /** Lowercase ISO currency, as Stripe spells it; every amount is in its minor unit. */
    currency: z.string().regex(/^[a-z]{3}$/),
    zones: z
      .array(
        z
          .object({
            name: z.string().min(1),
            destinations: z.array(destination).min(1),
            rates: z.array(rate).min(1),
          })
          .strict(),
      )
      .min(1),
  })
  .strict()
  .superRefine((table, ctx) => {
    table.zones.forEach((zone, zoneIndex) => {
      const seen = new Set<string>();
      zone.rates.forEach((entry, rateIndex) => {
        if (seen.has(entry.id))
          ctx.addIssue({
            code: "custom",
            path: ["zones", zoneIndex, "rates", rateIndex, "id"],
            message: `rate id ${entry.id} appears twice in zone ${zone.name}`,
          });
        seen.add(entry.id);
      });
    });
  });

export type RateTable = z.infer<typeof rateTableSchema>;
export type ShippingRateEntry = RateTable["zones"][number]["rates"][number];
export type DeliveryEstimate = NonNullable<ShippingRateEntry["deliveryEstimate"]>;

export interface RateDestination {
  country: string;
  region?: string | null | undefined;
  postalCode?: string | null | undefined;
}

export interface RateOrder {
  /** Merchandise subtotal in minor units (before shipping, tax and discounts). */
  subtotal: number;
  /** The parcel plan's parcel weights, in ounces. */
  parcelWeightsOz: readonly number[];
}

export interface ShippingQuote {
  rateId: string;
  zone: string;
  displayName: string;
  amount: number;
  currency: string;
  deliveryEstimate: DeliveryEstimate | null;
  /** The carrier service the rate ships at, when the table names one. */
  carrierService?: { carrier?: string | undefined; service: string } | undefined;
}

const normalizePostal = (postal: string): string => postal.replace(/[\s-]/g, "").toUpperCase();

/** How specifically `entry` covers the destination: 0 not at all, 1 country, 2 region, 3 postal prefix. */
function specificity(entry: z.infer<typeof destination>, to: RateDestination): number {
  if (entry.country !== to.country.toUpperCase()) return 0;
  if (entry.regions) {
    const region = to.region?.toUpperCase();
    if (!region || !entry.regions.some((candidate) => candidate.toUpperCase() === region)) return 0;
  }
  if (entry.postalPrefixes) {
    const postal = to.postalCode ? normalizePostal(to.postalCode) : "";
    if (!postal || !entry.postalPrefixes.some((prefix) => postal.startsWith(normalizePostal(prefix))))
      return 0;
    return 3;
  }
  return entry.regions ? 2 : 1;
}

/** The zone that covers the destination (most specific first, then the first listed), if any. */
export function zoneFor(table: RateTable, to: RateDestination): RateTable["zones"][number] | null {
  let best: { zone: RateTable["zones"][number]; score: number } | null = null;
  for (const zone of table.zones) {
    const score = Math.max(...zone.destinations.map((entry) => specificity(entry, to)));
    if (score > 0 && (!best || score > best.score)) best = { zone, score };
  }
  return best?.zone ?? null;
}

/** One rate's price for the order, or null when the rate has no price for it (a parcel too heavy). */
export function priceRate(entry: ShippingRateEntry, order: RateOrder): number | null {
  if (entry.freeOverAmount !== undefined && order.subtotal >= entry.freeOverAmount) return 0;
  if (entry.pricing.type === "flat") return entry.pricing.amount;
  let total = 0;
  for (const weight of order.parcelWeightsOz) {
    const band = entry.pricing.bands.find((candidate) => weight <= candidate.upToOz);
    if (!band) return null;
    total += band.amount;
  }
  return total;
}

/**
 * The shipping options the table offers for this destination and order, in the table's order.
 * An empty list means the table does not cover the destination (or prices none of its rates for
 * this order): the caller refuses the checkout rather than ship for free.
 */
export function quoteShipping(table: RateTable, to: RateDestination, order: RateOrder): ShippingQuote[] {
  const zone = zoneFor(table, to);
  if (!zone) return [];
  return zone.rates.flatMap((entry) => {
    const price = priceRate(entry, order);
    return price === null
      ? []
      : [
          {
            rateId: entry.id,
            zone: zone.name,
            displayName: entry.displayName,
            amount: price,
            currency: table.currency,
            deliveryEstimate: entry.deliveryEstimate ?? null,
            ...(entry.carrierService ? { carrierService: entry.carrierService } : {}),
          },
        ];
  });
}
