import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import { offerLiveRates, type LiveRatePolicy, type LiveRateQuoter } from "../../shipping/live-rates";
import { planParcels } from "../../shipping/parcel-plan";
import type { ShippingQuote } from "../../shipping/rate-table";
import type { CheckoutRequest } from "./checkout-request";

/** Live carrier rates at checkout (CHECKOUT_LIVE_RATES, decision 0203). */
export interface CheckoutServiceLiveRates {
  quoter: LiveRateQuoter;
  policy: LiveRatePolicy;
  itemWeightOz: number;
  maxWeightOz?: number | undefined;
  /** Where each checkout's shipping options came from (a metric ops can watch for fallbacks). */
  observe?: (source: "live" | "table", fallback?: "carrier_unavailable" | "no_live_rate") => void;
}

const notCovered = (destination: NonNullable<CheckoutRequest["destination"]>) =>
  new AppError(
    "shipping_destination_not_covered",
    `This shop does not ship to ${[destination.country, destination.region, destination.postalCode].filter(Boolean).join(" ")}`,
    { details: { destination } },
  );

/**
 * The carrier's live options for this order, or null for the rate table's (the checkout
 * service's `quoted`): live rates off, nothing to ship, no postal code with a table to fall back
 * on, the carrier unavailable (warned, counted) or rating nothing there. Without a table it
 * refuses, before anything is written: no postal code (422 shipping_destination_required),
 * nothing rated (422 shipping_destination_not_covered), the carrier unavailable (503: retry).
 */
export async function liveQuoted(
  live: CheckoutServiceLiveRates | undefined,
  context: { logger: Logger; hasTable: boolean },
  request: CheckoutRequest,
  order: {
    currency: string;
    digitalOnly: boolean;
    lines: { sku: string; unitPrice: number; quantity: number }[];
  },
): Promise<ShippingQuote[] | null> {
  if (!live || order.digitalOnly) return null;
  const { logger, hasTable } = context;
  const destination = request.destination;
  // A carrier rates a postal code: without one, the destination is not known well enough.
  if (!destination?.postalCode) {
    if (hasTable) return null;
    throw new AppError(
      "shipping_destination_required",
      "This shop charges shipping by destination: send destination { country, region?, postalCode }",
    );
  }
  const parcels = planParcels(order.lines, {
    itemWeightOz: live.itemWeightOz,
    maxWeightOz: live.maxWeightOz,
  });
  let options: ShippingQuote[];
  try {
    const rates = await live.quoter.quote(
      destination,
      parcels.map((parcel) => ({ weightOz: parcel.weightOz })),
    );
    options = offerLiveRates(rates, live.policy, order.currency);
  } catch (error) {
    // Ops see it: a warning per checkout and the fallback counted (checkout_shipping_quotes_total).
    logger.warn(
      { err: error, destination },
      hasTable
        ? "live carrier rates unavailable: offering the shop's rate table"
        : "live carrier rates unavailable and no rate table to fall back on: checkout refused (503)",
    );
    live.observe?.("table", "carrier_unavailable");
    if (!hasTable) {
      throw new AppError("service_unavailable", "Shipping rates are unavailable; please retry", {
        cause: error,
      });
    }
    return null;
  }
  if (options.length > 0) {
    live.observe?.("live");
    return options;
  }
  logger.info({ destination }, "no live carrier rate for this destination: the shop's rate table decides");
  live.observe?.("table", "no_live_rate");
  if (!hasTable) throw notCovered(destination);
  return null;
}
