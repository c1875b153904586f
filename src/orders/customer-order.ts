import type { Database } from "../db/client";

/** What the customer's pages show of an order: nothing about other orders, no internal ids. */
export async function findCustomerOrder(db: Database, where: { id: string } | { checkoutSessionId: string }) {
  return db.order.findUnique({
    where,
    include: {
      lines: { orderBy: { sku: "asc" } },
      // The current label of each parcel (a re-shipped parcel shows its new one).
      shipments: { where: { supersededAt: null }, orderBy: { parcelNumber: "asc" } },
      payment: true,
      review: true,
      // Every refund the customer is owed or has had (a failed one is ops' to retry, not money moved).
      refunds: { where: { status: { not: "failed" } }, orderBy: { createdAt: "asc" } },
    },
  });
}

export type CustomerOrder = NonNullable<Awaited<ReturnType<typeof findCustomerOrder>>>;
