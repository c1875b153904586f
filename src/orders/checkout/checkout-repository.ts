import { randomUUID } from "node:crypto";
import type { Database } from "../../db/client";
import type { OrderStatus } from "../../generated/prisma/enums";
import { recordHolds, releaseHolds, takeStockForHold } from "../../inventory/stock-holds";

export interface PendingOrderInput {
  customerId: string;
  email: string;
  currency: string;
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
  /** The client's Idempotency-Key, unique per customer. */
  idempotencyKey: string | null;
  /** Hash of the parsed request, to refuse the same key with another body. */
  requestHash: string;
  /** The Checkout Session's expires_at, and so the end of the stock hold. */
  expiresAt: Date;
}

/** An order as checkout needs it to (re)build its Checkout Session request. */
export interface CheckoutOrder {
  orderId: string;
  status: OrderStatus;
  customerId: string;
  email: string;
  currency: string;
  checkoutSessionId: string | null;
  requestHash: string;
  expiresAt: Date;
  createdAt: Date;
  /** Sorted by SKU, so the session request is the same every time it is built. */
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
}

export interface CheckoutRepository {
  /**
   * One transaction: the order (pending) with its lines, total and checkout request, and the
   * stock hold for every line. Throws HoldOutOfStock (nothing written) when a line is short, and
   * Prisma's unique violation (P2002) when the customer's Idempotency-Key is already taken.
   */
  createPendingOrder(input: PendingOrderInput): Promise<{ orderId: string; total: number }>;
  findByIdempotencyKey(customerId: string, idempotencyKey: string): Promise<CheckoutOrder | null>;
  findCheckout(orderId: string): Promise<CheckoutOrder | null>;
  /** Sets the session once: a replay with the same id changes nothing. False if another is set. */
  attachCheckoutSession(orderId: string, checkoutSessionId: string): Promise<boolean>;
  /**
   * The checkout cannot be paid: the order (if still pending) expires and its hold is released,
   * in one transaction.
   */
  abandon(orderId: string, reason: string): Promise<void>;
  /** Pending orders with no Checkout Session attached, created before `createdBefore`. */
  findHalfMade(createdBefore: Date, limit: number): Promise<string[]>;
}

function toCheckoutOrder(order: {
  id: string;
  status: OrderStatus;
  customerId: string;
  email: string;
  currency: string;
  checkoutSessionId: string | null;
  createdAt: Date;
  lines: { sku: string; name: string; unitPrice: number; quantity: number }[];
  checkout: { requestHash: string; expiresAt: Date } | null;
}): CheckoutOrder | null {
  if (!order.checkout) return null;
  return {
    orderId: order.id,
    status: order.status,
    customerId: order.customerId,
    email: order.email,
    currency: order.currency.trim(),
    checkoutSessionId: order.checkoutSessionId,
    requestHash: order.checkout.requestHash,
    expiresAt: order.checkout.expiresAt,
    createdAt: order.createdAt,
    lines: order.lines
      .map(({ sku, name, unitPrice, quantity }) => ({ sku, name, unitPrice, quantity }))
      .sort((a, b) => a.sku.localeCompare(b.sku)),
  };
}

const checkoutInclude = {
  lines: true,
  checkout: { select: { requestHash: true, expiresAt: true } },
} as const;

export function createCheckoutRepository(db: Database): CheckoutRepository {
  return {
    async createPendingOrder(input) {
      const total = input.lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
      const orderId = randomUUID();
      await db.$transaction(async (tx) => {
        // The order first, the stock last: the product row stays locked (against every other
        // checkout of that SKU) only from the decrement to the commit, two statements.
        await tx.order.create({
          data: {
            id: orderId,
            customerId: input.customerId,
            email: input.email,
            currency: input.currency,
            total,
            lines: { create: input.lines },
            checkout: {
              create: {
                customerId: input.customerId,
                idempotencyKey: input.idempotencyKey,
                requestHash: input.requestHash,
                expiresAt: input.expiresAt,
              },
            },
            timeline: {
              create: {
                kind: "checkout-started",
                detail: { total, currency: input.currency, holdUntil: input.expiresAt.toISOString() },
              },
            },
          },
          select: { id: true },
        });
        await takeStockForHold(tx, input.lines);
        await recordHolds(tx, orderId, input.lines, input.expiresAt);
      });
      return { orderId, total };
    },

    async findByIdempotencyKey(customerId, idempotencyKey) {
      const request = await db.checkoutRequest.findUnique({
        where: { customerId_idempotencyKey: { customerId, idempotencyKey } },
        select: { order: { include: checkoutInclude } },
      });
      return request ? toCheckoutOrder(request.order) : null;
    },

    async findCheckout(orderId) {
      const order = await db.order.findUnique({ where: { id: orderId }, include: checkoutInclude });
      return order ? toCheckoutOrder(order) : null;
    },

    async attachCheckoutSession(orderId, checkoutSessionId) {
      return db.$transaction(async (tx) => {
        const attached = await tx.order.updateMany({
          where: { id: orderId, checkoutSessionId: null },
          data: { checkoutSessionId },
        });
        if (attached.count === 0) {
          const order = await tx.order.findUnique({
            where: { id: orderId },
            select: { checkoutSessionId: true },
          });
          return order?.checkoutSessionId === checkoutSessionId;
        }
        await tx.orderTimelineEntry.create({
          data: { orderId, kind: "checkout-session-created", detail: { checkoutSessionId } },
        });
        return true;
      });
    },

    async abandon(orderId, reason) {
      await db.$transaction(async (tx) => {
        const expired = await tx.order.updateMany({
          where: { id: orderId, status: "pending" },
          data: { status: "expired" },
        });
        if (expired.count === 0) return;
        await tx.orderTimelineEntry.create({
          data: { orderId, kind: "checkout-failed", detail: { reason } },
        });
        await releaseHolds(tx, orderId, reason);
      });
    },

    async findHalfMade(createdBefore, limit) {
      const orders = await db.order.findMany({
        where: { status: "pending", checkoutSessionId: null, createdAt: { lt: createdBefore } },
        select: { id: true },
        orderBy: { createdAt: "asc" },
        take: limit,
      });
      return orders.map((order) => order.id);
    },
  };
}
