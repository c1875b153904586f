import type Stripe from "stripe";
import { AppError } from "../../errors";
import type { OrderStatus } from "../../generated/prisma/enums";
import { fulfilmentKey, orderPlacedEventId, type OrderPlacedData } from "../../inngest/events";
import type { EventPublisher } from "../../inngest/publisher";
import type { Logger } from "../../logger";
import type { WebhookOutcome } from "../../metrics/metrics";
import {
  owesAnnouncement,
  placedStatuses,
  type IntakeRepository,
  type OrderKey,
  type OrderSnapshot,
  type PlacedOrder,
} from "./intake-repository";
import { KeyedMutex } from "../../shared/keyed-mutex";
import { RecentIds } from "./recent-ids";
import { orderKeyOf, planFor, type CheckoutLookup, type IntakePlan } from "./stripe-event-plan";
import type { Alerter } from "../../alerts";
import type { StockHolds } from "../../inventory/stock-holds";

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
  /** Stripe's current record of a Checkout Session (with its PaymentIntent). */
  lookupCheckout: CheckoutLookup;
  /** Stock held for the checkout: released once the order can no longer be paid. */
  holds: Pick<StockHolds, "release">;
  alerts: Pick<Alerter, "notify">;
  publisher: EventPublisher;
  logger: Logger;
  onTransition?: (to: OrderStatus) => void;
  /** Deadline for the event API (duplicates of the delivery wait meanwhile). Default 5 s. */
  publishTimeoutMs?: number;
}

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
 * 1. the event id is recorded (unique) and the order moved by a conditional update in one
 *    statement; a redelivery finds its id taken and changes nothing;
 * 2. once that has committed, the delivery that finds the order placed and not yet announced
 *    sends the event, then marks the order announced (`placed_event_sent_at`). Deliveries for
 *    one order take turns here (a per-order mutex, no database lock held across the call), so
 *    a concurrent duplicate waits and then finds the order announced. If the send fails the
 *    route answers 500 with the mark unset, and Stripe's retry (a redelivery: step 1 is a no-op)
 *    sends it. Once marked, no delivery sends again however late it comes; Inngest's 24-hour
 *    id deduplication is only the second line of defence (it covers a crash between send and
 *    mark, and duplicates racing on two replicas).
 */
export function createStripeIntake(deps: StripeIntakeDeps): StripeIntake {
  const logger = deps.logger.child({ component: "stripe-intake" });
  const publishTimeoutMs = deps.publishTimeoutMs ?? 5_000;
  // Event ids whose handling completed here, with nothing left owed: a redelivery of one is
  // answered from memory. Losing this (restart, another replica) only costs a database read.
  const settled = new RecentIds(50_000);
  const announcing = new KeyedMutex();

  const send = async (order: PlacedOrder): Promise<void> => {
    const data: OrderPlacedData = {
      ...order,
      currency: order.currency.toLowerCase(),
      fulfilmentKey: fulfilmentKey(order.orderId),
    };
    await withDeadline(
      deps.publisher.publish({
        name: "shop/order.placed",
        id: orderPlacedEventId(order.orderId),
        data: { ...data },
      }),
      publishTimeoutMs,
    );
  };

  /**
   * Sends shop/order.placed if the order still owes it, then marks it; the caller holds the
   * order's turn (`announcing`). `current` is the order as this delivery's own statement left it,
   * taken while holding the turn: nothing in this process can have announced it since, so it
   * spares a read. Without it, the order is read again (the delivery before us may have
   * announced it while we waited).
   */
  const announceInTurn = async (
    orderId: string,
    event: Stripe.Event,
    current?: OrderSnapshot,
  ): Promise<boolean> => {
    const order = current ?? (await deps.repository.findOrder(orderId));
    if (!order || !owesAnnouncement(order)) return false;
    const { status: _status, placedEventSentAt: _sent, ...placed } = order;
    try {
      await send(placed);
    } catch (error) {
      // 500: Stripe retries, and the retry finds the announcement still owed.
      throw new AppError("internal_error", `shop/order.placed for order ${orderId} was not accepted`, {
        cause: error,
      });
    }
    await deps.repository.markAnnounced(orderId, event.id);
    logger.info({ orderId, eventId: event.id }, "shop/order.placed sent");
    return true;
  };

  const announce = (orderId: string, event: Stripe.Event): Promise<boolean> =>
    announcing.run(orderId, () => announceInTurn(orderId, event));

  /** Answering an error would make Stripe retry for three days, and it would never succeed. */
  const unknownOrder = (event: Stripe.Event, key: OrderKey): IntakeResult => {
    logger.warn({ eventId: event.id, type: event.type, ...key }, "Stripe event for an order we do not know");
    return { outcome: "unknown-order", announced: false };
  };

  /** An order that can no longer be paid gives its held stock back (repeating it is a no-op). */
  const releaseHoldIfUnpayable = async (orderId: string, status: OrderStatus): Promise<void> => {
    if (status !== "expired" && status !== "payment_failed") return;
    const released = await deps.holds.release(orderId, `order is ${status}`);
    if (released.length > 0) logger.info({ orderId, released }, "stock hold released");
  };

  /** Records what `plan` asks, then releases a hold or announces as the order now needs. */
  async function recordAndSettle(
    event: Stripe.Event,
    plan: Exclude<IntakePlan, { kind: "ignore" }>,
    orderId: string,
    key: OrderKey,
    inTurn: boolean,
  ): Promise<IntakeResult> {
    const recorded =
      plan.kind === "transition"
        ? await deps.repository.recordTransition(event, plan.checkoutSessionId, plan)
        : plan.kind === "mismatch"
          ? await deps.repository.recordMismatch(event, plan.checkoutSessionId, plan.reason, plan.problems)
          : plan.kind === "declined"
            ? await deps.repository.recordDecline(event, orderId, plan.detail)
            : await deps.repository.recordAuthorizationLost(event, plan.paymentIntentId, plan.reason);
    if (!recorded.order) return unknownOrder(event, key);
    if (recorded.changed && plan.kind === "transition") {
      deps.onTransition?.(plan.to);
      logger.info(
        { orderId, eventId: event.id, type: event.type, status: recorded.order.status },
        "order moved by Stripe event",
      );
    }
    if (recorded.changed && plan.kind === "declined") {
      logger.info({ orderId, eventId: event.id, code: plan.detail.code }, "payment declined at checkout");
    }
    if (recorded.changed && plan.kind === "authorization-lost") {
      logger.warn({ orderId, eventId: event.id, reason: plan.reason }, "order flagged for ops");
    }
    if (recorded.changed && plan.kind === "mismatch") {
      logger.warn(
        { orderId, eventId: event.id, problems: plan.problems },
        "payment mismatch: order held for ops",
      );
      await deps.alerts.notify({
        title: "Payment does not match its order: not shipped",
        fields: {
          orderId,
          stripeEvent: event.id,
          type: event.type,
          problems: plan.problems.join("; "),
          action:
            "Compare the order with the Checkout Session and PaymentIntent in Stripe; refund or fulfil by hand. A forged event means the webhook secret may have leaked: roll it",
        },
      });
    }
    await releaseHoldIfUnpayable(orderId, recorded.order.status);
    const announced = !owesAnnouncement(recorded.order)
      ? false
      : inTurn
        ? await announceInTurn(orderId, event, recorded.changed ? recorded.order : undefined)
        : await announce(orderId, event);
    settled.add(event.id);
    return { outcome: recorded.firstDelivery ? "processed" : "duplicate", orderId, announced };
  }

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
      const { orderId } = seen.order;
      if (seen.recorded) {
        // A redelivery: its change is on record; only an announcement may still be owed
        // (the earlier attempt failed to send it).
        await releaseHoldIfUnpayable(orderId, seen.order.status);
        const announced = owesAnnouncement(seen.order) ? await announce(orderId, event) : false;
        settled.add(event.id);
        return { outcome: "duplicate", orderId, announced };
      }

      const plan = await planFor(event, deps.lookupCheckout, seen.order);
      if (plan.kind === "ignore") {
        logger.info(
          { orderId, eventId: event.id, type: event.type, reason: plan.reason },
          "Stripe event changes nothing",
        );
        return { outcome: "ignored", orderId, announced: false };
      }
      // An event that can place the order takes the order's turn before it records the change,
      // and keeps it until the announcement is marked: no other delivery in this process can
      // announce the order in between, so the delivery that placed it announces from what its
      // own statement returned (three statements for a first delivery, not four).
      return plan.kind === "transition" && placedStatuses.includes(plan.to)
        ? announcing.run(orderId, () => recordAndSettle(event, plan, orderId, key, true))
        : recordAndSettle(event, plan, orderId, key, false);
    },
  };
}
