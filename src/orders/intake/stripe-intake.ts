import type Stripe from "stripe";
import { AppError } from "../../errors";
import type { OrderStatus } from "../../generated/prisma/enums";
import { orderPlacedEventId, type OrderPlacedData } from "../../inngest/events";
import type { EventPublisher } from "../../inngest/publisher";
import type { Logger } from "../../logger";
import type { WebhookOutcome } from "../../metrics/metrics";
import type { IntakeRepository, OrderKey, PlacedOrder } from "./intake-repository";
import { placedStatuses } from "./intake-repository";
import { RecentIds } from "./recent-ids";
import { orderKeyOf, planFor, type PaymentIntentStatusLookup } from "./stripe-event-plan";

export interface IntakeResult {
  outcome: WebhookOutcome | "unknown-order";
  orderId?: string;
  /** True when this delivery handed shop/order.placed to Inngest. */
  announced: boolean;
}

export interface StripeIntake {
  handle(event: Stripe.Event): Promise<IntakeResult>;
}

export interface StripeIntakeDeps {
  repository: IntakeRepository;
  lookupPaymentIntent: PaymentIntentStatusLookup;
  publisher: EventPublisher;
  logger: Logger;
  onTransition?: (to: OrderStatus) => void;
  /** Deadline for the event API (the order's row lock is held meanwhile). Default 5 s. */
  publishTimeoutMs?: number;
}

class PublishFailed extends Error {}

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Turns verified Stripe events into order transitions, and a placed order into exactly one
 * shop/order.placed (id `order-placed-<orderId>`):
 * - the event id is recorded (unique) and the order moved by a conditional update in one
 *   transaction; a redelivery finds its id taken and changes nothing;
 * - the delivery that places the order sends the event inside that transaction, under the order's
 *   row lock, and marks the order announced. If the send fails, everything rolls back and the
 *   route answers 500; Stripe's retry is then a first delivery again and sends. Once marked, no
 *   delivery sends again however late it comes: Inngest's 24-hour id deduplication is only the
 *   second line of defence.
 */
export function createStripeIntake(deps: StripeIntakeDeps): StripeIntake {
  const logger = deps.logger.child({ component: "stripe-intake" });
  const publishTimeoutMs = deps.publishTimeoutMs ?? 5_000;
  // Ids whose delivery committed here. A recorded event never owes anything more (its transition
  // and any announcement committed together), so a redelivery of one is answered from memory.
  const settled = new RecentIds(50_000);

  const announce = async (order: PlacedOrder): Promise<void> => {
    const data: OrderPlacedData = { ...order, currency: order.currency.toLowerCase() };
    try {
      await withDeadline(
        deps.publisher.publish({
          name: "shop/order.placed",
          id: orderPlacedEventId(order.orderId),
          data: { ...data },
        }),
        publishTimeoutMs,
      );
    } catch (error) {
      throw new PublishFailed(`shop/order.placed for order ${order.orderId} was not accepted`, {
        cause: error,
      });
    }
  };

  /** Answering an error would make Stripe retry for three days, and it would never succeed. */
  const unknownOrder = (event: Stripe.Event, key: OrderKey): IntakeResult => {
    logger.warn({ eventId: event.id, type: event.type, ...key }, "Stripe event for an order we do not know");
    return { outcome: "unknown-order", announced: false };
  };

  return {
    async handle(event) {
      const key = orderKeyOf(event);
      if ("ignore" in key) {
        logger.debug({ eventId: event.id, type: event.type, reason: key.ignore }, "Stripe event ignored");
        return { outcome: "ignored", announced: false };
      }
      if (settled.has(event.id)) return { outcome: "duplicate", announced: false };
      const seen = await deps.repository.peek(event.id, key);
      if (!seen.order) return unknownOrder(event, key);
      const owesAnnouncement =
        seen.order.placedEventSentAt === null && placedStatuses.includes(seen.order.status);
      if (seen.recorded && !owesAnnouncement) {
        settled.add(event.id);
        return { outcome: "duplicate", orderId: seen.order.orderId, announced: false };
      }

      const plan = await planFor(event, deps.lookupPaymentIntent);
      if (plan.kind === "ignore") {
        logger.info(
          { eventId: event.id, type: event.type, reason: plan.reason },
          "Stripe event changes nothing",
        );
        return { outcome: "ignored", orderId: seen.order.orderId, announced: false };
      }
      let recorded;
      try {
        recorded =
          plan.kind === "transition"
            ? await deps.repository.recordTransition(event, plan.checkoutSessionId, plan, announce)
            : await deps.repository.recordAuthorizationLost(event, plan.paymentIntentId, plan.reason);
      } catch (error) {
        if (error instanceof PublishFailed)
          throw new AppError("internal_error", error.message, { cause: error });
        throw error;
      }
      if (!recorded.order) return unknownOrder(event, key);
      settled.add(event.id);
      const orderId = recorded.order.orderId;
      if (recorded.changed && plan.kind === "transition") {
        deps.onTransition?.(plan.to);
        logger.info(
          { orderId, eventId: event.id, type: event.type, status: recorded.order.status },
          "order moved by Stripe event",
        );
      }
      if (recorded.changed && plan.kind === "authorization-lost") {
        logger.warn({ orderId, eventId: event.id, reason: plan.reason }, "order flagged for ops");
      }
      if (recorded.announced) logger.info({ orderId }, "shop/order.placed sent");
      return {
        outcome: recorded.firstDelivery ? "processed" : "duplicate",
        orderId,
        announced: recorded.announced,
      };
    },
  };
}
