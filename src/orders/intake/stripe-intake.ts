import type Stripe from "stripe";
import type { OrderStatus } from "../../generated/prisma/enums";
import { fulfilmentKey, orderPlaced, orderPlacedEvent, type OrderPlacedData } from "../../events/contracts";
import { inngestUnavailable, type EventPublisher } from "../../events/publisher";
import type { Logger } from "../../logger";
import type { WebhookOutcome } from "../../metrics/metrics";
import {
  owesAnnouncement,
  placedStatuses,
  type IntakeRepository,
  type OrderKey,
  type OrderSnapshot,
  type PlacedOrder,
  type RecordOutcome,
} from "./intake-repository";
import { KeyedMutex } from "../../shared/keyed-mutex";
import { RecentIds } from "./recent-ids";
import {
  claimedPayment,
  orderKeyOf,
  planFor,
  type CheckoutFacts,
  type CheckoutLookup,
  type IntakePlan,
  type OrderTerms,
} from "./stripe-event-plan";
import type { Alerter } from "../../alerts";
import type { StockHolds } from "../../inventory/stock-holds";
import { isRefundEvent, type RefundEvents } from "./refund-events";
import { isRiskEvent, type RiskEvents } from "./risk-events";

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
  /** Refunds made at Stripe (charge.refunded, refund.*): recorded and acted on. */
  refunds?: RefundEvents;
  /** Disputes and Radar (charge.dispute.*, review.*, radar.early_fraud_warning.created). */
  risks?: RiskEvents;
  /** Checkout Sessions paying a return's exchange difference (src/returns/exchange-payment-events.ts). */
  exchanges?: { owns(event: Stripe.Event): boolean; handle(event: Stripe.Event): Promise<IntakeResult> };
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
 *    statement; a redelivery finds its id taken and changes nothing. A payment's first delivery
 *    asks Stripe first and checks the order inside that statement (placeAsClaimed); every other
 *    event reads the order first (handleFromOrder);
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
    await withDeadline(deps.publisher.publish(orderPlacedEvent(data)), publishTimeoutMs);
  };

  /**
   * Sends shop/order.placed if the order still owes it, then marks it; the caller holds the
   * order's turn (`announcing`) and logs the announcement. `current` is the order as this
   * delivery's own statement left it, taken while holding the turn: nothing in this process can
   * have announced it since, so it spares a read. Without it, the order is read again (the
   * delivery before us may have announced it while we waited).
   */
  const announceInTurn = async (
    orderId: string,
    event: Stripe.Event,
    current?: OrderSnapshot,
  ): Promise<boolean> => {
    const order = current ?? (await deps.repository.findOrder(orderId));
    if (!order || !owesAnnouncement(order)) return false;
    const { status: _status, placedEventSentAt: _sent, moneyRecorded: _money, ...placed } = order;
    try {
      await send(placed);
    } catch (error) {
      // 503 naming Inngest: Stripe retries, and the retry finds the announcement still owed.
      throw inngestUnavailable(`${orderPlaced.name} for order ${orderId}`, error);
    }
    await deps.repository.markAnnounced(orderId, event.id);
    return true;
  };

  const logAnnounced = (orderId: string, event: Stripe.Event) =>
    logger.info({ orderId, eventId: event.id }, `${orderPlaced.name} sent`);

  /** Takes the order's turn to send an announcement still owed (a redelivery's, usually). */
  const announce = (orderId: string, event: Stripe.Event): Promise<boolean> =>
    announcing.run(orderId, async () => {
      const sent = await announceInTurn(orderId, event);
      if (sent) logAnnounced(orderId, event);
      return sent;
    });

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

  type RecordingPlan = Exclude<IntakePlan, { kind: "ignore" }>;

  /** Records what `plan` asks, in one statement. */
  const record = (event: Stripe.Event, plan: RecordingPlan, orderId: string): Promise<RecordOutcome> =>
    plan.kind === "transition"
      ? deps.repository.recordTransition(event, plan.checkoutSessionId, plan)
      : plan.kind === "mismatch"
        ? deps.repository.recordMismatch(event, plan.checkoutSessionId, plan.reason, plan.problems)
        : plan.kind === "declined"
          ? deps.repository.recordDecline(event, orderId, plan.detail)
          : deps.repository.recordAuthorizationLost(event, plan.paymentIntentId, plan.reason);

  /** After the record: tells ops, releases a hold or announces as the order now needs. */
  async function settle(
    event: Stripe.Event,
    plan: RecordingPlan,
    orderId: string,
    key: OrderKey,
    inTurn: boolean,
    recorded: RecordOutcome,
  ): Promise<IntakeResult> {
    if (!recorded.order) return unknownOrder(event, key);
    const moved = recorded.changed && plan.kind === "transition";
    if (moved) deps.onTransition?.(plan.to);
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
    let announced = false;
    try {
      await releaseHoldIfUnpayable(orderId, recorded.order.status);
      if (owesAnnouncement(recorded.order)) {
        announced = inTurn
          ? await announceInTurn(orderId, event, recorded.changed ? recorded.order : undefined)
          : await announce(orderId, event);
      }
    } finally {
      // A move and the announcement it led to make one line (the webhook's hottest path), logged
      // even when the announcement failed: the move itself is committed.
      if (moved) {
        logger.info(
          {
            orderId,
            eventId: event.id,
            type: event.type,
            status: recorded.order.status,
            ...(announced ? { placedEventSent: true } : {}),
          },
          "order moved by Stripe event",
        );
      } else if (announced && inTurn) {
        logAnnounced(orderId, event);
      }
    }
    settled.add(event.id);
    return { outcome: recorded.firstDelivery ? "processed" : "duplicate", orderId, announced };
  }

  const recordAndSettle = async (
    event: Stripe.Event,
    plan: RecordingPlan,
    orderId: string,
    key: OrderKey,
    inTurn: boolean,
  ): Promise<IntakeResult> => settle(event, plan, orderId, key, inTurn, await record(event, plan, orderId));

  /**
   * The common first delivery of a payment, in two statements rather than three. Stripe's record
   * is asked first, and the statement that records the event and moves the order also checks that
   * the order is the one the payment is for (the id the payload names, Stripe's total and
   * currency), where the general path reads the order before asking Stripe. The price: a
   * redelivery this process has not seen (after a restart, or on another replica) and a session
   * naming an order id that is not in this database (another deployment on the same Stripe
   * account) each cost one Stripe lookup that the general path would have spared.
   * Undefined when the claim does not hold or the payment does not place the order: the caller
   * then decides from the order, with Stripe's answer in hand.
   */
  async function placeAsClaimed(
    event: Stripe.Event,
    orderId: string,
    facts: CheckoutFacts,
    key: OrderKey,
  ): Promise<IntakeResult | undefined> {
    if (facts.amountTotal === null || facts.currency === null) return undefined;
    // With Stripe's breakdown the order's own figure is the session's subtotal (its lines at their
    // prices) until the breakdown is recorded, and Stripe's total after (an order already placed).
    const terms: OrderTerms = facts.money
      ? {
          orderId,
          total: facts.amountSubtotal ?? facts.amountTotal,
          currency: facts.currency,
          recordedTotal: facts.amountTotal,
        }
      : { orderId, total: facts.amountTotal, currency: facts.currency };
    const plan = await planFor(event, async () => facts, terms);
    if (plan.kind !== "transition" || !placedStatuses.includes(plan.to)) return undefined;
    return announcing.run(orderId, async () => {
      const recorded = await deps.repository.recordPlacement(event, plan.checkoutSessionId, plan, terms);
      if (!recorded.order) return unknownOrder(event, key);
      if (!recorded.termsMatch) return undefined;
      return settle(event, plan, orderId, key, true, recorded);
    });
  }

  /** The general path: the order first (which also finds a redelivery), then the plan. */
  async function handleFromOrder(
    event: Stripe.Event,
    key: OrderKey,
    lookup: CheckoutLookup,
  ): Promise<IntakeResult> {
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

    const plan = await planFor(event, lookup, seen.order);
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
    // own statement returned (no re-read).
    return plan.kind === "transition" && placedStatuses.includes(plan.to)
      ? announcing.run(orderId, () => recordAndSettle(event, plan, orderId, key, true))
      : recordAndSettle(event, plan, orderId, key, false);
  }

  return {
    async handle(event) {
      if (deps.refunds && isRefundEvent(event)) return deps.refunds.handle(event);
      if (deps.risks && isRiskEvent(event)) return deps.risks.handle(event);
      if (deps.exchanges?.owns(event)) return deps.exchanges.handle(event);
      const key = orderKeyOf(event);
      if ("ignore" in key) {
        logger.debug({ eventId: event.id, type: event.type, reason: key.ignore }, "Stripe event ignored");
        return { outcome: "ignored", announced: false };
      }
      if (settled.has(event.id)) return { outcome: "duplicate", announced: false };

      const claim = claimedPayment(event);
      if (!claim) return handleFromOrder(event, key, deps.lookupCheckout);
      const facts = await deps.lookupCheckout(claim.checkoutSessionId);
      const placed = await placeAsClaimed(event, claim.orderId, facts, key);
      if (placed) return placed;
      // The claim did not hold (or there is nothing to place): decide from the order, without
      // asking Stripe twice.
      return handleFromOrder(event, key, async (id) => (id === facts.id ? facts : deps.lookupCheckout(id)));
    },
  };
}
