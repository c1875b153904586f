import type Stripe from "stripe";

/**
 * What one order line cost, as Stripe's Checkout Session priced it (its expanded `line_items`):
 * `amountTotal` is `amountSubtotal − amountDiscount + amountTax` for tax-exclusive prices (for
 * tax-inclusive ones the tax is inside the subtotal already, and Stripe's total says so).
 */
export interface LineMoney {
  /** Our SKU: the line's product's `metadata.sku` (src/payments/stripe-checkout.ts sets it). */
  sku: string;
  quantity: number;
  amountSubtotal: number;
  amountDiscount: number;
  amountTax: number;
  amountTotal: number;
  /**
   * Stripe's `price.tax_behavior` is `inclusive`: `amountTax` is inside `amountSubtotal`, not on
   * top (decision 0204). Absent for tax-exclusive (and older) lines.
   */
  taxInclusive?: true;
}

/** The shipping option the customer chose, as Stripe reports it (`shipping_cost.shipping_rate`). */
export interface ChosenShipping {
  shippingRateId: string;
  displayName: string | null;
  /** The rate's metadata: `rateId` (the shop's rate table), `carrier` and `service` when set. */
  metadata: Record<string, string>;
  amountSubtotal: number;
  amountTax: number;
  amountTotal: number;
}

/**
 * The money of an order, recorded once from Stripe when the paid checkout is taken in
 * (orders.money_breakdown) and never recomputed here: every later figure (a short line's share, a
 * returned unit's refund, the day's books) is derived from these numbers.
 */
export interface MoneyBreakdown {
  currency: string;
  /** `amount_subtotal`: the lines at their prices, before discount, shipping and exclusive tax. */
  subtotal: number;
  /** `total_details.amount_shipping` (before the shipping's own tax). */
  shipping: number;
  /** `total_details.amount_discount`. */
  discount: number;
  /** `total_details.amount_tax`: the lines' and the shipping's tax together. */
  tax: number;
  /** `amount_total`: what the customer paid. */
  total: number;
  shippingRate: ChosenShipping | null;
  lines: LineMoney[];
}

/** What `checkout.sessions.retrieve` must expand for `breakdownOf` to read everything. */
export const breakdownExpansions = ["line_items.data.price.product", "shipping_cost.shipping_rate"] as const;

function skuOf(item: Stripe.LineItem): string | null {
  const product = item.price?.product;
  if (!product || typeof product === "string" || product.deleted) return null;
  return product.metadata.sku ?? null;
}

/**
 * The breakdown of a Checkout Session retrieved with `breakdownExpansions` (and every line item:
 * `lineItems` when the session's own list has more pages). Null when the session lacks a figure
 * (an older test double, a session retrieved without the expansions): the caller then records
 * nothing, and the order keeps its lines at their prices (no shipping, discount or tax).
 */
export function breakdownOf(
  session: Stripe.Checkout.Session,
  lineItems: readonly Stripe.LineItem[] | undefined = session.line_items?.data,
): MoneyBreakdown | null {
  if (session.amount_subtotal === null || session.amount_total === null || !session.currency) return null;
  if (!lineItems || lineItems.length === 0) return null;
  const lines: LineMoney[] = [];
  for (const item of lineItems) {
    const sku = skuOf(item);
    if (sku === null || item.quantity === null) return null;
    lines.push({
      sku,
      quantity: item.quantity,
      amountSubtotal: item.amount_subtotal,
      amountDiscount: item.amount_discount,
      amountTax: item.amount_tax,
      amountTotal: item.amount_total,
      ...(item.price?.tax_behavior === "inclusive" ? { taxInclusive: true as const } : {}),
    });
  }
  const cost = session.shipping_cost;
  const rate = cost?.shipping_rate;
  const details = session.total_details;
  return {
    currency: session.currency.toLowerCase(),
    subtotal: session.amount_subtotal,
    shipping: details?.amount_shipping ?? 0,
    discount: details?.amount_discount ?? 0,
    tax: details?.amount_tax ?? 0,
    total: session.amount_total,
    shippingRate:
      cost && rate
        ? {
            shippingRateId: typeof rate === "string" ? rate : rate.id,
            displayName: typeof rate === "string" ? null : rate.display_name,
            metadata: typeof rate === "string" ? {} : { ...rate.metadata },
            amountSubtotal: cost.amount_subtotal,
            amountTax: cost.amount_tax,
            amountTotal: cost.amount_total,
          }
        : null,
    lines,
  };
}

/**
 * Stripe's figures must add up before they are recorded: the lines' totals and the shipping's
 * total make the session's total, and the lines' subtotals its subtotal. Any problem, in words.
 */
export function breakdownProblems(money: MoneyBreakdown): string[] {
  const problems: string[] = [];
  const sum = (pick: (line: LineMoney) => number) =>
    money.lines.reduce((total, line) => total + pick(line), 0);
  if (sum((line) => line.amountSubtotal) !== money.subtotal)
    problems.push(
      `line items' amount_subtotal add up to ${sum((line) => line.amountSubtotal)}, not ${money.subtotal}`,
    );
  const paid = sum((line) => line.amountTotal) + (money.shippingRate?.amountTotal ?? 0);
  if (paid !== money.total)
    problems.push(
      `line items' and shipping's amount_total add up to ${paid}, not amount_total ${money.total}`,
    );
  return problems;
}

/** Reads orders.money_breakdown (JSON) back; null for an order that has none. */
export function storedBreakdown(value: unknown): MoneyBreakdown | null {
  if (value === null || value === undefined || typeof value !== "object") return null;
  const money = value as MoneyBreakdown;
  return Array.isArray(money.lines) ? money : null;
}

/**
 * What the first `units` units of a line are worth: `floor(amountTotal × units ÷ quantity)`, so
 * a line's units are worth its price plus its tax share less its discount share, pro-rated, and
 * all of them exactly its `amountTotal`. The rounding rule (cumulative floor): the units returned
 * (or not shipped) so far decide what the next ones are worth, so however a line is returned —
 * one unit at a time or all at once, short at fulfilment and the rest returned — the refunds of
 * every unit add up to the line's total to the cent, never a cent more.
 */
export function unitsWorth(line: Pick<LineMoney, "amountTotal" | "quantity">, units: number): number {
  if (line.quantity <= 0) return 0;
  const clamped = Math.max(0, Math.min(units, line.quantity));
  return Math.floor((line.amountTotal * clamped) / line.quantity);
}

/** What `units` more units of a line are worth after `before` units of it were settled already. */
export function nextUnitsWorth(
  line: Pick<LineMoney, "amountTotal" | "quantity">,
  before: number,
  units: number,
): number {
  return unitsWorth(line, before + units) - unitsWorth(line, before);
}

/**
 * The short lines' money (partial fulfilment): a line's last `short` units, as the shipped units
 * come first in `unitsWorth`'s order (so the shipped ones, returned later, and the short ones
 * together are the line's total exactly).
 */
export function shortUnitsWorth(line: Pick<LineMoney, "amountTotal" | "quantity">, short: number): number {
  return nextUnitsWorth(line, line.quantity - short, short);
}
