import type { Database } from "../../db/client";

export interface PendingOrderInput {
  customerId: string;
  email: string;
  currency: string;
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
}

export interface CheckoutRepository {
  /** Creates the order (status pending) with its lines and total; returns its id. */
  createPendingOrder(input: PendingOrderInput): Promise<{ orderId: string; total: number }>;
  attachCheckoutSession(orderId: string, checkoutSessionId: string): Promise<void>;
  /** No Checkout Session could be made: the pending order will never be paid. */
  abandon(orderId: string, reason: string): Promise<void>;
}

export function createCheckoutRepository(db: Database): CheckoutRepository {
  return {
    async createPendingOrder(input) {
      const total = input.lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
      const order = await db.order.create({
        data: {
          customerId: input.customerId,
          email: input.email,
          currency: input.currency,
          total,
          lines: { create: input.lines },
          timeline: { create: { kind: "checkout-started", detail: { total, currency: input.currency } } },
        },
        select: { id: true },
      });
      return { orderId: order.id, total };
    },

    async attachCheckoutSession(orderId, checkoutSessionId) {
      await db.$transaction([
        db.order.update({ where: { id: orderId }, data: { checkoutSessionId } }),
        db.orderTimelineEntry.create({
          data: { orderId, kind: "checkout-session-created", detail: { checkoutSessionId } },
        }),
      ]);
    },

    async abandon(orderId, reason) {
      await db.$transaction([
        db.order.updateMany({ where: { id: orderId, status: "pending" }, data: { status: "expired" } }),
        db.orderTimelineEntry.create({ data: { orderId, kind: "checkout-failed", detail: { reason } } }),
      ]);
    },
  };
}
