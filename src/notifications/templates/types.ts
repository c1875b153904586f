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
}

/** Builds the summary from an order row with its lines (the shape Prisma returns with include: { lines }). */
export function toOrderSummary(
  order: {
    id: string;
    currency: string;
    total: number;
    lines: readonly OrderLineSummary[];
  },
  orderUrl?: string,
): OrderSummary {
  return {
    ...(orderUrl ? { orderUrl } : {}),
    orderId: order.id,
    currency: order.currency,
    total: order.total,
    lines: order.lines.map(({ name, quantity, unitPrice }) => ({ name, quantity, unitPrice })),
  };
}
