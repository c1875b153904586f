import { storedBreakdown } from "../../payments/money-breakdown";
/** What every template renders to; the sender puts the three parts into one multipart message. */
export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

export interface OrderLineSummary {
  name: string;
  quantity: number;
  /** Minor units, in the order's currency. */
  unitPrice: number;
}

/** The customer-facing view of an order that every template shows. */
export interface OrderSummary {
  orderId: string;
  currency: string;
  /** Minor units. */
  total: number;
  lines: readonly OrderLineSummary[];
  /** The customer's signed order page; every e-mail links it when set. */
  orderUrl?: string;
  /** Stripe's breakdown, when the order recorded one: subtotal, shipping, discount and tax before the total. */
  money?: MoneySummary;
}

/** The money lines above an order's total (src/payments/money-breakdown.ts, as Stripe computed them). */
export interface MoneySummary {
  subtotal: number;
  shipping: number;
  shippingName: string | null;
  discount: number;
  tax: number;
  /** The tax is inside the prices (tax-inclusive, as Stripe reported the lines): shown as included. */
  taxIncluded?: boolean;
}

/** One line's share of the discount and its tax, as Stripe recorded them (never recomputed here). */
export interface LineMoneySummary {
  discount: number;
  tax: number;
  taxIncluded: boolean;
}

/**
 * The recorded breakdown's per-line discount and tax by SKU, for the lines that have either;
 * empty for an order without a breakdown.
 */
export function lineMoneyOf(stored: unknown): Map<string, LineMoneySummary> {
  const money = storedBreakdown(stored);
  const bySku = new Map<string, LineMoneySummary>();
  for (const line of money?.lines ?? []) {
    if (line.amountDiscount === 0 && line.amountTax === 0) continue;
    bySku.set(line.sku, {
      discount: line.amountDiscount,
      tax: line.amountTax,
      taxIncluded: line.taxInclusive === true,
    });
  }
  return bySku;
}

/** The summary's money lines of a stored breakdown; undefined for an order without one. */
export function moneySummaryOf(stored: unknown): MoneySummary | undefined {
  const money = storedBreakdown(stored);
  if (!money) return undefined;
  return {
    subtotal: money.subtotal,
    shipping: money.shipping,
    shippingName: money.shippingRate?.displayName ?? null,
    discount: money.discount,
    tax: money.tax,
    ...(money.lines.some((line) => line.taxInclusive) ? { taxIncluded: true } : {}),
  };
}

/** Builds the summary from an order row with its lines (the shape Prisma returns with include: { lines }). */
export function toOrderSummary(
  order: {
    id: string;
    currency: string;
    total: number;
    lines: readonly OrderLineSummary[];
    moneyBreakdown?: unknown;
  },
  orderUrl?: string,
): OrderSummary {
  const money = moneySummaryOf(order.moneyBreakdown);
  return {
    ...(orderUrl ? { orderUrl } : {}),
    ...(money ? { money } : {}),
    orderId: order.id,
    currency: order.currency,
    total: order.total,
    lines: order.lines.map(({ name, quantity, unitPrice }) => ({ name, quantity, unitPrice })),
  };
}
