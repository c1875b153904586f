import { AppError } from "../errors";
import { orderCancelledEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { OrderRepository, OrderStatus } from "./order-repository";

/** Paid orders whose parcel is not booked yet; after that only ops can stop it. */
const cancellableStatuses: readonly OrderStatus[] = ["authorized", "paid", "fulfilling"];

export interface CancelOrderDeps {
  orders: OrderRepository;
  publisher: EventPublisher;
  cancelWindowMs: number;
  now?: () => Date;
}

/**
 * Asks the fulfilment run to stop. The run's cancelOn listens for CANCEL_WINDOW after it starts;
 * past that window, or once shipped or finished, the answer is 409 and nothing changes.
 */
export async function requestOrderCancellation(deps: CancelOrderDeps, orderId: string, reason?: string) {
  const order = await deps.orders.findForFulfilment(orderId);
  if (!order) throw new AppError("order_not_found", `Order ${orderId} does not exist`);
  const now = deps.now?.() ?? new Date();
  if (order.status === "pending" || order.status === "payment_processing") {
    throw new AppError(
      "order_not_cancellable",
      `Order ${orderId} is ${order.status}: it has not been paid, so there is nothing to cancel yet; ` +
        "an unpaid checkout expires on its own (Stripe expires a Checkout Session after 24 hours)",
    );
  }
  if (!cancellableStatuses.includes(order.status) || order.hasShipment) {
    throw new AppError(
      "order_not_cancellable",
      `Order ${orderId} is ${order.status} and can no longer be cancelled`,
    );
  }
  const windowOpenedAt = order.placedAt ?? order.createdAt;
  if (now.getTime() - windowOpenedAt.getTime() > deps.cancelWindowMs) {
    throw new AppError("order_not_cancellable", `Order ${orderId} is past its cancellation window`);
  }
  if (order.cancelRequestedAt === null) {
    const marked = await deps.orders.requestCancellation(orderId, cancellableStatuses);
    if (!marked) throw new AppError("order_not_cancellable", `Order ${orderId} can no longer be cancelled`);
  }
  await deps.publisher.publish(orderCancelledEvent({ orderId, ...(reason ? { reason } : {}) }));
  return { orderId, status: "cancellation_requested" as const };
}
