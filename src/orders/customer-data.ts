import type { Database } from "../db/client";

/** The values of an order that identify its customer: e-mail, and every part of the shipping address. */
export type CustomerDataLookup = (orderId: string) => Promise<string[]>;

/**
 * What must never leave the service in clear with an error (src/inngest/error-scrubbing.ts).
 * Read only when a step fails, so the hot path never pays for it.
 */
export function createCustomerDataLookup(db: Database): CustomerDataLookup {
  return async (orderId) => {
    const order = await db.order.findUnique({
      where: { id: orderId },
      select: { email: true, shippingAddress: true },
    });
    if (order === null) return [];
    const address =
      typeof order.shippingAddress === "object" && order.shippingAddress !== null
        ? Object.values(order.shippingAddress as Record<string, unknown>)
        : [];
    return [order.email, ...address].filter((value): value is string => typeof value === "string");
  };
}
