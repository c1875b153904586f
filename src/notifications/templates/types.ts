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
