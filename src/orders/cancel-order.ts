import { AppError } from "../errors";
import { orderCancelledEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { Timeline } from "../timeline/timeline";
import type { Actor } from "./actor";
import type { OrderRepository, OrderStatus } from "./order-repository";
import { cancellableStatuses as modelCancellableStatuses, decide } from "../shared/order-model";
import { refusal, type OrderFactsReader } from "./model-check";

/**
 * Paid orders whose parcel is not booked yet, and shipped ones whose label the carrier has not
 * scanned (the cleanup hands the label back); after the first scan only ops can stop the parcel.
 */
const cancellableStatuses: readonly OrderStatus[] = modelCancellableStatuses;

/** The one `cancel-requested` entry's key: an order is asked to stop once, however often asked. */
export const cancelRequestEntryKey = "cancel-request";

export interface CancelOrderDeps {
  orders: OrderRepository;
  publisher: EventPublisher;
  timeline: Pick<Timeline, "record">;
  cancelWindowMs: number;
  /** CHECKOUT_SESSION_TTL as configured ("1h"): how long an unpaid checkout stays payable. */
  checkoutSessionTtl?: string;
  /** The order model's facts of the order (model-check.ts): the model decides whether it may stop. */
  facts: OrderFactsReader;
  now?: () => Date;
}

export interface CancelRequest {
  orderId: string;
  reason?: string;
  by: Actor;
}

/**
 * Cancel, from the admin API or the console: asks the fulfilment run to stop, and puts the reason
 * and who asked on the timeline (the workflow's own entry says how it ended). The run's cancelOn
 * listens for CANCEL_WINDOW after it starts; past that window, or once shipped or finished, the
 * answer is 409 and nothing changes.
 */
export async function cancelOrder(deps: CancelOrderDeps, { orderId, reason, by }: CancelRequest) {
  const order = await deps.orders.findForFulfilment(orderId);
  const facts = order ? await deps.facts(orderId) : null;
  if (!order || !facts) throw new AppError("order_not_found", `Order ${orderId} does not exist`);
  const now = deps.now?.() ?? new Date();
  // The order model first (decision 0170): its reason is the answer; the statement below is the
  // fence against a change between this read and the write.
  const verdict = decide("cancel", facts);
  if (!verdict.allowed) {
    const unpaid = order.status === "pending" || order.status === "payment_processing";
    throw refusal(
      orderId,
      "cancel",
      verdict,
      unpaid
        ? {
            more:
              `an unpaid checkout expires on its own, ${deps.checkoutSessionTtl ?? "1h"} (CHECKOUT_SESSION_TTL) ` +
              "after it was opened, and its held stock is released",
          }
        : {},
    );
  }
  const windowOpenedAt = order.placedAt ?? order.createdAt;
  if (now.getTime() - windowOpenedAt.getTime() > deps.cancelWindowMs) {
    throw new AppError("order_not_cancellable", `Order ${orderId} is past its cancellation window`);
  }
  if (order.cancelRequestedAt === null) {
    const marked = await deps.orders.requestCancellation(orderId, cancellableStatuses);
    if (!marked) {
      // Moved on between the model's read and the statement: the model says why, on the facts now.
      const now = await deps.facts(orderId);
      const later = now ? decide("cancel", now) : null;
      if (later && !later.allowed) throw refusal(orderId, "cancel", later);
      throw new AppError("order_not_cancellable", `Order ${orderId} can no longer be cancelled`);
    }
  }
  await announceStop(deps, { orderId, reason, by });
  return { orderId, status: "cancellation_requested" as const };
}

async function announceStop(
  deps: Pick<CancelOrderDeps, "publisher" | "timeline">,
  { orderId, reason, by }: { orderId: string; reason?: string | undefined; by: string },
): Promise<void> {
  // Both idempotent by the order: the event's id is the order's, and the entry's key is one per
  // order, so two cancels at once (or a cancel and a full refund) answer alike and leave one trace.
  await deps.publisher.publish(orderCancelledEvent({ orderId, ...(reason ? { reason } : {}) }));
  await deps.timeline.record(
    orderId,
    "cancel-requested",
    { ...(reason ? { reason } : {}), by },
    cancelRequestEntryKey,
  );
}

/**
 * The same stop as a cancel, for a fact rather than a request (the payment was refunded in full
 * at Stripe): no cancellation window applies. The run's cancel and its cleanup do the rest; once
 * the run no longer listens, its guarded writes still refuse to ship a cancelled order.
 * False when the order could not be marked (it moved on meanwhile).
 */
export async function requestStop(
  deps: Pick<CancelOrderDeps, "publisher" | "timeline"> & {
    orders: Pick<CancelOrderDeps["orders"], "requestCancellation">;
  },
  request: { orderId: string; cancellableFrom: readonly OrderStatus[]; reason: string; by: string },
): Promise<boolean> {
  const marked = await deps.orders.requestCancellation(request.orderId, request.cancellableFrom);
  if (!marked) return false;
  await announceStop(deps, request);
  return true;
}
