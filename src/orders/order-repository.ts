import type { Database } from "../db/client";
import type { OrderStatus } from "../generated/prisma/enums";

export type { OrderStatus };

export interface OrderLineView {
  sku: string;
  name: string;
  unitPrice: number;
  quantity: number;
}

export interface FulfilmentOrder {
  id: string;
  customerId: string;
  email: string;
  status: OrderStatus;
  currency: string;
  total: number;
  paymentIntentId: string | null;
  claimId: string | null;
  cancelRequestedAt: Date | null;
  createdAt: Date;
  /** When shop/order.placed was accepted: roughly when the fulfilment run started. */
  placedAt: Date | null;
  lines: OrderLineView[];
  hasShipment: boolean;
}

export type ClaimOutcome =
  | { claimed: true }
  | {
      claimed: false;
      reason: "claimed-by-another-run" | "cancel-requested" | "not-paid-yet" | "not-payable" | "not-found";
    };

/** Statuses from which fulfilment may start: the money is authorized or already taken. */
export const payableStatuses: readonly OrderStatus[] = ["authorized", "paid"];
/** A `fulfilling` order without a claim was re-driven: its failed run let go, a new run may take it. */
const claimableStatuses: readonly OrderStatus[] = [...payableStatuses, "fulfilling"];
/** Statuses that may still become payable: the payment is not confirmed yet. */
const awaitingPaymentStatuses: readonly OrderStatus[] = ["pending", "payment_processing"];

export interface OrderRepository {
  findForFulfilment(orderId: string): Promise<FulfilmentOrder | null>;
  /**
   * Gives the order to one fulfilment run: it takes `claimId` only when it has none (and is
   * payable and not being cancelled) or already has this one. One conditional UPDATE decides,
   * so two runs racing for the same order cannot both win, whenever they run.
   */
  claim(orderId: string, claimId: string): Promise<ClaimOutcome>;
  /** Moves the order to `to` only from one of `from`; returns whether it moved. */
  transition(orderId: string, from: readonly OrderStatus[], to: OrderStatus): Promise<boolean>;
  flagForOps(orderId: string, reason: string): Promise<void>;
  /** Marks a cancellation request; false when the order is past the point of cancelling. */
  requestCancellation(orderId: string, cancellableFrom: readonly OrderStatus[]): Promise<boolean>;
}

/**
 * `onTransition` hears of every status change this repository makes (for metrics), once: only the
 * UPDATE that actually moved the order reports it, never a retried claim finding its own claim.
 */
export function createOrderRepository(
  db: Database,
  options: { onTransition?: (to: OrderStatus) => void } = {},
): OrderRepository {
  const moved = (to: OrderStatus) => options.onTransition?.(to);
  return {
    async findForFulfilment(orderId) {
      const order = await db.order.findUnique({
        where: { id: orderId },
        include: { lines: { orderBy: { sku: "asc" } }, shipment: { select: { id: true } } },
      });
      if (!order) return null;
      return {
        id: order.id,
        customerId: order.customerId,
        email: order.email,
        status: order.status,
        currency: order.currency,
        total: order.total,
        paymentIntentId: order.paymentIntentId,
        claimId: order.claimId,
        cancelRequestedAt: order.cancelRequestedAt,
        createdAt: order.createdAt,
        placedAt: order.placedEventSentAt,
        lines: order.lines.map(({ sku, name, unitPrice, quantity }) => ({ sku, name, unitPrice, quantity })),
        hasShipment: order.shipment !== null,
      };
    },

    async claim(orderId, claimId) {
      const taken = await db.order.updateMany({
        where: {
          id: orderId,
          claimId: null,
          cancelRequestedAt: null,
          status: { in: [...claimableStatuses] },
        },
        data: { claimId, status: "fulfilling" },
      });
      if (taken.count > 0) {
        moved("fulfilling");
        return { claimed: true };
      }
      const order = await db.order.findUnique({ where: { id: orderId } });
      if (!order) return { claimed: false, reason: "not-found" };
      // A retried claim step finds its own claim already in place.
      if (order.claimId === claimId) return { claimed: true };
      if (order.claimId !== null) return { claimed: false, reason: "claimed-by-another-run" };
      if (order.cancelRequestedAt !== null) return { claimed: false, reason: "cancel-requested" };
      if (awaitingPaymentStatuses.includes(order.status)) return { claimed: false, reason: "not-paid-yet" };
      return { claimed: false, reason: "not-payable" };
    },

    async transition(orderId, from, to) {
      const updated = await db.order.updateMany({
        where: { id: orderId, status: { in: [...from] } },
        data: { status: to },
      });
      if (updated.count > 0) moved(to);
      return updated.count > 0;
    },

    async flagForOps(orderId, reason) {
      await db.order.updateMany({ where: { id: orderId }, data: { attentionReason: reason } });
    },

    async requestCancellation(orderId, cancellableFrom) {
      const marked = await db.order.updateMany({
        where: { id: orderId, status: { in: [...cancellableFrom] }, shipment: { is: null } },
        data: { cancelRequestedAt: new Date() },
      });
      return marked.count > 0;
    },
  };
}
