import { randomUUID } from "node:crypto";
import type Stripe from "stripe";
import type { OpsNotice } from "../../../src/alerts";
import type { OrderStatus } from "../../../src/generated/prisma/enums";
import type { EventPublisher, OutgoingEvent } from "../../../src/events/publisher";
import type { ReservationLine } from "../../../src/inventory/inventory";
import type {
  IntakeRepository,
  OrderKey,
  OrderSnapshot,
  RecordOutcome,
} from "../../../src/orders/intake/intake-repository";
import type { CheckoutFacts, CheckoutLookup } from "../../../src/orders/intake/stripe-event-plan";
import type { StripeIntakeDeps } from "../../../src/orders/intake/stripe-intake";
import { captureLog, type CapturedLog } from "../log-capture";

/**
 * In-memory stand-ins for the Stripe intake's ports (`StripeIntakeDeps`), for tests that drive
 * `createStripeIntake` directly: no HTTP server, no engine, no database. Each one keeps the
 * contract of the real implementation it replaces, so a test that passes here says something
 * about production:
 * - FakeIntakeRepository: src/orders/intake/intake-repository.ts, held to it by
 *   test/orders/intake/intake-repository-contract.test.ts (the same scenarios against both). An event id is recorded once
 *   (the unique `stripe_events.id`); only its first delivery may change the order; a transition
 *   happens only from one of `from` (the conditional UPDATE); nothing is written for an order that
 *   does not exist; `markAnnounced` marks once. Every method runs to completion without
 *   awaiting, so like the one-statement CTEs it is atomic with respect to concurrent deliveries.
 * - FakeCheckoutLookup: Stripe's `checkout.sessions.retrieve(id, {expand: ["payment_intent"]})`.
 * - FakeHolds, FakeAlerts, FakePublisher: record what they were asked; the publisher can be made
 *   to refuse or to hang, as Inngest's event API can.
 */

/** An order as the `orders` table holds it, with what the intake's statements read and write. */
export interface FakeOrder extends OrderSnapshot {
  checkoutSessionId: string;
  attentionReason: string | null;
  shippingAddress: unknown;
  /** Statuses of the order's `payments` rows (`captured`, `refunded`, `voided` settle its money). */
  paymentStatuses: string[];
  createdAt: number;
}

export interface FakeTimelineEntry {
  orderId: string;
  kind: string;
  detail: Record<string, unknown>;
}

/** Money authorized but possibly not captured (the real repository's `uncapturedStatuses`). */
const uncapturedStatuses: readonly OrderStatus[] = ["authorized", "fulfilling"];

export class FakeIntakeRepository implements IntakeRepository {
  readonly orders = new Map<string, FakeOrder>();
  /** `stripe_events`: event id → the order it was recorded against. */
  readonly events = new Map<string, { type: string; orderId: string }>();
  readonly timeline: FakeTimelineEntry[] = [];
  /** While true, every call fails as a lost connection to PostgreSQL does. */
  unreachable = false;
  /** Every statement asked for, by method name, in order: which path a delivery took. */
  readonly calls: string[] = [];
  private clock = 0;

  private connect(method: keyof IntakeRepository): void {
    this.calls.push(method);
    if (this.unreachable) throw new Error("database unreachable");
  }

  /** Inserts an order (a pending checkout by default) and returns it. */
  addOrder(fields: Partial<FakeOrder> = {}): FakeOrder {
    const orderId = fields.orderId ?? randomUUID();
    const order: FakeOrder = {
      orderId,
      customerId: "cus-ada",
      email: "ada@example.com",
      total: 1200,
      currency: "usd",
      paymentIntentId: null,
      status: "pending",
      placedEventSentAt: null,
      checkoutSessionId: `cs_test_${orderId.slice(0, 8)}`,
      attentionReason: null,
      shippingAddress: null,
      paymentStatuses: [],
      createdAt: ++this.clock,
      ...fields,
    };
    this.orders.set(orderId, order);
    return order;
  }

  order(orderId: string): FakeOrder {
    const order = this.orders.get(orderId);
    if (!order) throw new Error(`no order ${orderId}`);
    return order;
  }

  timelineOf(orderId: string): FakeTimelineEntry[] {
    return this.timeline.filter((entry) => entry.orderId === orderId);
  }

  /** `id = $1::uuid`: PostgreSQL reads a uuid in either case. */
  private byId(orderId: string): FakeOrder | undefined {
    return this.orders.get(orderId.toLowerCase());
  }

  /** The newest order matching, as `ORDER BY created_at DESC LIMIT 1` finds it. */
  private find(match: (order: FakeOrder) => boolean): FakeOrder | undefined {
    return [...this.orders.values()].filter(match).sort((a, b) => b.createdAt - a.createdAt)[0];
  }

  private findByKey(key: OrderKey): FakeOrder | undefined {
    if ("checkoutSessionId" in key) return this.find((o) => o.checkoutSessionId === key.checkoutSessionId);
    if ("orderId" in key) return this.byId(key.orderId);
    return this.find((o) => o.paymentIntentId === key.paymentIntentId);
  }

  /** INSERT ... ON CONFLICT (id) DO NOTHING: true when this delivery recorded the event id. */
  private record(event: { id: string; type: string }, order: FakeOrder): boolean {
    if (this.events.has(event.id)) return false;
    this.events.set(event.id, { type: event.type, orderId: order.orderId });
    return true;
  }

  private outcome(order: FakeOrder | undefined, firstDelivery: boolean, changed: boolean): RecordOutcome {
    if (!order) return { order: null, firstDelivery: false, changed: false };
    return { order: snapshotOf(order), firstDelivery, changed };
  }

  async peek(eventId: string, key: OrderKey) {
    this.connect("peek");
    const order = this.findByKey(key);
    return order
      ? { order: snapshotOf(order), recorded: this.events.has(eventId) }
      : { order: null, recorded: false };
  }

  async recordTransition(
    event: { id: string; type: string },
    checkoutSessionId: string,
    change: Parameters<IntakeRepository["recordTransition"]>[2],
  ) {
    this.connect("recordTransition");
    return this.transition(event, checkoutSessionId, change);
  }

  /** The transition statement's body, shared by recordTransition and recordPlacement. */
  private transition(
    event: { id: string; type: string },
    checkoutSessionId: string,
    change: Parameters<IntakeRepository["recordTransition"]>[2],
  ): RecordOutcome {
    const order = this.find((o) => o.checkoutSessionId === checkoutSessionId);
    if (!order) return this.outcome(undefined, false, false);
    const firstDelivery = this.record(event, order);
    const moved = firstDelivery && change.from.includes(order.status);
    if (moved) {
      order.status = change.to;
      order.paymentIntentId = change.paymentIntentId ?? order.paymentIntentId;
      // The real statement stores `change.shippingAddress` when it is truthy, else keeps the column.
      order.shippingAddress = change.shippingAddress ? change.shippingAddress : order.shippingAddress;
      this.timeline.push({
        orderId: order.orderId,
        kind: change.timelineKind,
        detail: { stripeEvent: event.id, type: event.type },
      });
    }
    return this.outcome(order, firstDelivery, moved);
  }

  async recordPlacement(
    event: { id: string; type: string },
    checkoutSessionId: string,
    change: Parameters<IntakeRepository["recordPlacement"]>[2],
    terms: Parameters<IntakeRepository["recordPlacement"]>[3],
  ) {
    this.connect("recordPlacement");
    const order = this.find((o) => o.checkoutSessionId === checkoutSessionId);
    // As the statement compares them: a uuid in any case, the currency in any case.
    const termsMatch =
      order !== undefined &&
      order.orderId === terms.orderId.toLowerCase() &&
      order.total === terms.total &&
      order.currency.toLowerCase() === terms.currency.toLowerCase();
    if (!termsMatch) return { ...this.outcome(order, false, false), termsMatch };
    return { ...this.transition(event, checkoutSessionId, change), termsMatch };
  }

  async recordAuthorizationLost(
    event: { id: string; type: string },
    paymentIntentId: string,
    reason: string,
  ) {
    this.connect("recordAuthorizationLost");
    const order = this.find((o) => o.paymentIntentId === paymentIntentId);
    if (!order) return this.outcome(undefined, false, false);
    const firstDelivery = this.record(event, order);
    const flagged =
      firstDelivery &&
      uncapturedStatuses.includes(order.status) &&
      order.attentionReason === null &&
      !order.paymentStatuses.some((status) => ["captured", "refunded", "voided"].includes(status));
    if (flagged) {
      order.attentionReason = reason;
      this.timeline.push({
        orderId: order.orderId,
        kind: "authorization-lost",
        detail: { stripeEvent: event.id, reason },
      });
    }
    return this.outcome(order, firstDelivery, flagged);
  }

  async recordMismatch(
    event: { id: string; type: string },
    checkoutSessionId: string,
    reason: string,
    problems: string[],
  ) {
    this.connect("recordMismatch");
    const order = this.find((o) => o.checkoutSessionId === checkoutSessionId);
    if (!order) return this.outcome(undefined, false, false);
    const firstDelivery = this.record(event, order);
    if (firstDelivery) {
      order.attentionReason = order.attentionReason ?? reason;
      this.timeline.push({
        orderId: order.orderId,
        kind: "payment-mismatch",
        detail: { stripeEvent: event.id, type: event.type, problems },
      });
    }
    return this.outcome(order, firstDelivery, firstDelivery);
  }

  async recordDecline(event: { id: string; type: string }, orderId: string, detail: Record<string, string>) {
    this.connect("recordDecline");
    const order = this.byId(orderId);
    if (!order) return this.outcome(undefined, false, false);
    const firstDelivery = this.record(event, order);
    const noted = firstDelivery && (order.status === "pending" || order.status === "payment_processing");
    if (noted) {
      this.timeline.push({
        orderId: order.orderId,
        kind: "checkout-payment-declined",
        detail: { ...detail, stripeEvent: event.id },
      });
    }
    return this.outcome(order, firstDelivery, noted);
  }

  async findOrder(orderId: string) {
    this.connect("findOrder");
    const order = this.byId(orderId);
    return order ? snapshotOf(order) : null;
  }

  async markAnnounced(orderId: string, eventId: string) {
    this.connect("markAnnounced");
    const order = this.byId(orderId);
    if (!order || order.placedEventSentAt !== null) return false;
    order.placedEventSentAt = new Date();
    this.timeline.push({
      orderId: order.orderId,
      kind: "order-placed-sent",
      detail: { stripeEvent: eventId },
    });
    return true;
  }
}

function snapshotOf(order: FakeOrder): OrderSnapshot {
  return {
    orderId: order.orderId,
    status: order.status,
    placedEventSentAt: order.placedEventSentAt,
    customerId: order.customerId,
    email: order.email,
    total: order.total,
    currency: order.currency,
    paymentIntentId: order.paymentIntentId,
  };
}

/** Stripe's current record of each Checkout Session; an unknown id fails as Stripe's 404 does. */
export class FakeCheckoutLookup {
  readonly sessions = new Map<string, CheckoutFacts>();
  readonly asked: string[] = [];

  readonly lookup: CheckoutLookup = async (checkoutSessionId) => {
    this.asked.push(checkoutSessionId);
    const facts = this.sessions.get(checkoutSessionId);
    if (!facts) throw new Error(`No such checkout.session: '${checkoutSessionId}'`);
    return structuredClone(facts);
  };

  /** A complete session paid in full for `order`, its PaymentIntent in `intentStatus`. */
  paid(
    order: Pick<FakeOrder, "orderId" | "checkoutSessionId" | "total" | "currency">,
    intentStatus: Stripe.PaymentIntent.Status = "requires_capture",
    overrides: Partial<CheckoutFacts> = {},
  ): CheckoutFacts {
    const facts: CheckoutFacts = {
      id: order.checkoutSessionId,
      status: "complete",
      paymentStatus: intentStatus === "succeeded" ? "paid" : "unpaid",
      clientReferenceId: order.orderId,
      metadataOrderId: order.orderId,
      amountTotal: order.total,
      currency: order.currency,
      paymentIntent: {
        id: `pi_${order.orderId.slice(0, 8)}`,
        status: intentStatus,
        amount: order.total,
        currency: order.currency,
        metadataOrderId: order.orderId,
      },
      ...overrides,
    };
    this.sessions.set(order.checkoutSessionId, facts);
    return facts;
  }
}

export class FakeHolds {
  readonly released: { orderId: string; reason: string | undefined }[] = [];
  /** What each release hands back (the lines released now); the first release gets `held`. */
  constructor(private held: ReservationLine[] = [{ sku: "MUG", quantity: 1 }]) {}

  async release(orderId: string, reason?: string): Promise<ReservationLine[]> {
    this.released.push({ orderId, reason });
    const lines = this.held;
    this.held = [];
    return lines;
  }
}

export class FakeAlerts {
  readonly notices: OpsNotice[] = [];
  async notify(notice: OpsNotice): Promise<void> {
    this.notices.push(notice);
  }
}

/**
 * Inngest's event API: keeps what it accepted. `refuseNext(n)` makes the next n sends throw (as
 * `inngest.send` does on a 5xx); `hangNext()` makes the next send never answer; `gate()` holds
 * sends until the returned function is called, to line up concurrent deliveries; `delayNext(ms)`
 * answers the next send late.
 */
export class FakePublisher implements EventPublisher {
  readonly accepted: OutgoingEvent[] = [];
  attempts = 0;
  private refusals = 0;
  private hang = false;
  private delayMs = 0;
  private gates: Promise<void>[] = [];

  refuseNext(times = 1): void {
    this.refusals = times;
  }

  hangNext(): void {
    this.hang = true;
  }

  /** The next send is accepted after `ms` (a slow but healthy event API). */
  delayNext(ms: number): void {
    this.delayMs = ms;
  }

  gate(): () => void {
    let open!: () => void;
    this.gates.push(new Promise<void>((resolve) => (open = resolve)));
    return () => open();
  }

  async publish(event: OutgoingEvent): Promise<void> {
    this.attempts += 1;
    await Promise.all(this.gates);
    if (this.refusals > 0) {
      this.refusals -= 1;
      throw new Error("Inngest API Error: 502 Bad Gateway");
    }
    if (this.delayMs > 0) {
      const ms = this.delayMs;
      this.delayMs = 0;
      await new Promise((resolve) => setTimeout(resolve, ms));
    }
    if (this.hang) {
      this.hang = false;
      return new Promise<void>(() => undefined);
    }
    this.accepted.push(structuredClone(event));
  }
}

export interface IntakeFakes {
  repository: FakeIntakeRepository;
  stripe: FakeCheckoutLookup;
  holds: FakeHolds;
  alerts: FakeAlerts;
  publisher: FakePublisher;
  log: CapturedLog;
  transitions: OrderStatus[];
  deps: StripeIntakeDeps;
}

/** Every port of the intake faked, wired as src/orders/order-intake.ts wires the real ones. */
export function intakeFakes(options: { publishTimeoutMs?: number } = {}): IntakeFakes {
  const repository = new FakeIntakeRepository();
  const stripe = new FakeCheckoutLookup();
  const holds = new FakeHolds();
  const alerts = new FakeAlerts();
  const publisher = new FakePublisher();
  const log = captureLog();
  const transitions: OrderStatus[] = [];
  return {
    repository,
    stripe,
    holds,
    alerts,
    publisher,
    log,
    transitions,
    deps: {
      repository,
      lookupCheckout: stripe.lookup,
      holds,
      alerts,
      publisher,
      logger: log.logger,
      onTransition: (to) => void transitions.push(to),
      ...(options.publishTimeoutMs !== undefined ? { publishTimeoutMs: options.publishTimeoutMs } : {}),
    },
  };
}

let eventCounter = 0;

/** A Stripe event as stripe-node hands it over once verified (only the fields the intake reads). */
export function stripeEvent(type: string, object: object, id = `evt_test_${++eventCounter}`): Stripe.Event {
  return {
    id,
    object: "event",
    type,
    created: 1_700_000_000,
    livemode: false,
    api_version: "2025-03-31.basil",
    data: { object },
  } as unknown as Stripe.Event;
}

/** A Checkout Session as a webhook payload carries it. */
export function checkoutSession(
  fields: Partial<Stripe.Checkout.Session> & { id: string },
): Stripe.Checkout.Session {
  return {
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: "unpaid",
    payment_intent: null,
    metadata: {},
    collected_information: null,
    customer_details: null,
    ...fields,
  } as unknown as Stripe.Checkout.Session;
}

export function paymentIntent(fields: Partial<Stripe.PaymentIntent> & { id: string }): Stripe.PaymentIntent {
  return {
    object: "payment_intent",
    status: "canceled",
    cancellation_reason: null,
    metadata: {},
    last_payment_error: null,
    ...fields,
  } as unknown as Stripe.PaymentIntent;
}
