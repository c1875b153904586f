import type { QueryResultRow } from "pg";
import { sqlPool, type Database } from "../../db/client";
import type { OrderStatus } from "../../generated/prisma/enums";
import { timelineKindSql, type TimelineKind } from "../../timeline/kinds";
import type { MoneyBreakdown } from "../../payments/money-breakdown";
import type { OrderTerms } from "./stripe-event-plan";

/** A Stripe event as the intake records it. */
export interface RecordedEvent {
  id: string;
  type: string;
}

export interface PlacedOrder {
  orderId: string;
  customerId: string;
  email: string;
  total: number;
  currency: string;
  paymentIntentId: string | null;
}

export interface OrderSnapshot extends PlacedOrder {
  status: OrderStatus;
  placedEventSentAt: Date | null;
  /** Stripe's money breakdown is on record: `total` is then what Stripe charged. */
  moneyRecorded?: boolean;
}

export interface RecordOutcome {
  /** Null when no order has this Checkout Session / PaymentIntent: nothing was written. */
  order: OrderSnapshot | null;
  /** False when this event id was already recorded (a redelivery): nothing was changed. */
  firstDelivery: boolean;
  /** True when this delivery changed the order (its status, or its ops flag). */
  changed: boolean;
}

export interface StatusChange {
  from: readonly OrderStatus[];
  to: OrderStatus;
  paymentIntentId: string | null;
  timelineKind: TimelineKind;
  /** Stored on the order with the move (Checkout's collected address); null keeps what is there. */
  shippingAddress?: unknown;
  /** The card Checkout saved for off-session charges (a dearer exchange's difference), if any. */
  savedCard?: { customerId: string; paymentMethodId: string } | null;
  /**
   * Stripe's breakdown of the paid session: recorded once (an order that has one keeps it), and
   * the order's total becomes Stripe's `amount_total` with it.
   */
  money?: MoneyBreakdown | null;
}

export type OrderKey = { checkoutSessionId: string } | { paymentIntentId: string } | { orderId: string };

export interface PlacementOutcome extends RecordOutcome {
  /**
   * False when the order keyed on the session is not `terms` (another id, total or currency):
   * nothing was written, and `order` is the order as it is.
   */
  termsMatch: boolean;
}

export interface IntakeRepository {
  /**
   * A read before anything else: the order an event points at, and whether the event id is
   * already recorded. Lets a redelivery answer at once, and spares Stripe questions about
   * sessions that are not ours.
   */
  peek(eventId: string, key: OrderKey): Promise<{ order: OrderSnapshot | null; recorded: boolean }>;
  /**
   * One statement, so one transaction: records the event id (unique) and, only on its first
   * delivery, moves the order keyed on its Checkout Session from one of `from` to `to`.
   */
  recordTransition(
    event: RecordedEvent,
    checkoutSessionId: string,
    change: StatusChange,
  ): Promise<RecordOutcome>;
  /**
   * `recordTransition` for a payment the webhook's payload says is `terms` (the order its
   * Checkout Session names), in the same one statement: only if the order keyed on the session is
   * that order, for that total and currency, is anything written. It spares the first delivery
   * of a payment the read (`peek`) that would otherwise check the order before the move.
   */
  recordPlacement(
    event: RecordedEvent,
    checkoutSessionId: string,
    change: StatusChange,
    terms: OrderTerms,
  ): Promise<PlacementOutcome>;
  /**
   * Same for `payment_intent.canceled`: records the event and flags the order keyed on its
   * PaymentIntent for ops, if it is authorized and its money was neither captured nor voided by us.
   */
  recordAuthorizationLost(
    event: RecordedEvent,
    paymentIntentId: string,
    reason: string,
  ): Promise<RecordOutcome>;
  /**
   * Records the event and flags the order keyed on its Checkout Session for ops (its status is
   * left as it is, so it is not placed): the payment Stripe reports is not this order's, or not
   * for its amount. The first reason stays; every mismatching event adds a timeline entry.
   */
  recordMismatch(
    event: RecordedEvent,
    checkoutSessionId: string,
    reason: string,
    problems: string[],
  ): Promise<RecordOutcome>;
  /**
   * Same for `payment_intent.payment_failed` at checkout: records the event and, while the order
   * is still unpaid, a `checkout-payment-declined` timeline entry; the status does not change.
   */
  recordDecline(
    event: RecordedEvent,
    orderId: string,
    detail: Record<string, string>,
  ): Promise<RecordOutcome>;
  /** The order as it is now, for a decision that must not use a stale read. */
  findOrder(orderId: string): Promise<OrderSnapshot | null>;
  /** Marks shop/order.placed as accepted for the order (once: a second mark changes nothing). */
  markAnnounced(orderId: string, eventId: string): Promise<boolean>;
}

/** Statuses in which an order has been placed: shop/order.placed must have been accepted. */
export const placedStatuses: readonly OrderStatus[] = ["authorized", "paid"];

/** Placed, but shop/order.placed not accepted yet: the announcement is owed. */
export const owesAnnouncement = (order: { status: OrderStatus; placedEventSentAt: Date | null }): boolean =>
  order.placedEventSentAt === null && placedStatuses.includes(order.status);

/** Money authorized but possibly not captured: where a lost authorization matters. */
const uncapturedStatuses: readonly OrderStatus[] = ["authorized", "fulfilling"];

/** An order as every intake statement returns it (test/db/row-types.test.ts checks the columns). */
export interface Row {
  order_id: string;
  status: OrderStatus;
  placed_event_sent_at: Date | null;
  customer_id: string;
  email: string;
  total: number;
  currency: string;
  payment_intent_id: string | null;
  money_recorded: boolean;
  first_delivery: boolean;
  changed: boolean;
}

function snapshotOf(row: Row): OrderSnapshot {
  return {
    orderId: row.order_id,
    status: row.status,
    placedEventSentAt: row.placed_event_sent_at,
    customerId: row.customer_id,
    email: row.email,
    total: row.total,
    currency: row.currency.trim(),
    paymentIntentId: row.payment_intent_id,
    moneyRecorded: row.money_recorded,
  };
}

function outcomeOf(rows: Row[]): RecordOutcome {
  const row = rows[0];
  if (!row) return { order: null, firstDelivery: false, changed: false };
  return { order: snapshotOf(row), firstDelivery: row.first_delivery, changed: row.changed };
}

/**
 * The order columns every statement returns, as this delivery leaves the order: `changed` is the
 * row the statement updated (if it did), `target` the row as the statement found it.
 */
const orderColumns = (target: string, changed: string): string =>
  `${target}.id AS order_id, COALESCE(${changed}.status, ${target}.status) AS status,
   CASE WHEN ${changed}.id IS NULL THEN ${target}.placed_event_sent_at ELSE ${changed}.placed_event_sent_at END
     AS placed_event_sent_at,
   ${target}.customer_id, ${target}.email, COALESCE(${changed}.total, ${target}.total) AS total, ${target}.currency,
   COALESCE(${changed}.payment_intent_id, ${target}.payment_intent_id) AS payment_intent_id,
   COALESCE(${changed}.money_breakdown, ${target}.money_breakdown) IS NOT NULL AS money_recorded`;

/** What `target` reads of an order: the columns above. */
const targetColumns =
  "id, status, placed_event_sent_at, customer_id, email, total, currency, payment_intent_id, money_breakdown";

const peekWhere = {
  checkoutSessionId: "o.checkout_session_id = $2",
  orderId: "o.id = $2::uuid",
  paymentIntentId: "o.payment_intent_id = $2",
} as const;

const peekSql = (where: string) => `
  SELECT ${orderColumns("o", "o")}, false AS first_delivery, false AS changed,
         EXISTS (SELECT 1 FROM stripe_events WHERE id = $1) AS recorded
  FROM orders o WHERE ${where}
  ORDER BY o.created_at DESC LIMIT 1`;

// Every recording statement starts the same way: the event id is inserted once (its unique index
// is the deduplication), for the order found in `target` (if `condition` holds of it); $2 and $3
// are the event's id and type. The caller closes the parenthesis.
const recordEventCte = (condition = "true") => `recorded AS (
    INSERT INTO stripe_events (id, type, order_id, processed_at)
    SELECT $2, $3, target.id, now() FROM target WHERE ${condition}
    ON CONFLICT (id) DO NOTHING
    RETURNING order_id`;

/** The target order as the CTE named `changedBy` left it, and whether this delivery changed it. */
const changedOrderResult = (changedBy: string, extraColumns = ""): string => `
  SELECT ${orderColumns("target", changedBy)},
         EXISTS (SELECT 1 FROM recorded) AS first_delivery,
         ${changedBy}.id IS NOT NULL AS changed${extraColumns}
  FROM target LEFT JOIN ${changedBy} ON ${changedBy}.id = target.id`;

// One data-modifying CTE is one statement: the event row, the status change and the timeline
// entry commit together or not at all. A concurrent duplicate blocks on the event id's unique
// index until the first commits, then inserts nothing (ON CONFLICT DO NOTHING) and so changes
// nothing. The UPDATE's `status` test is the conditional transition, re-checked against the
// committed row, so racing events for one order cannot both move it. The moved row is returned
// as the UPDATE left it (its `placed_event_sent_at` included), so the caller that moved an order
// knows without another read whether its announcement is owed.
const transitionSql = (terms: string) => `
  WITH target AS (
    SELECT ${targetColumns}, ${terms} AS terms_match FROM orders WHERE checkout_session_id = $1
  ), ${recordEventCte("target.terms_match")}
  ), moved AS (
    UPDATE orders o
    SET status = $4::order_status,
        payment_intent_id = COALESCE($5, o.payment_intent_id),
        shipping_address = COALESCE($6::jsonb, o.shipping_address),
        stripe_customer_id = COALESCE($9::text, o.stripe_customer_id),
        payment_method_id = COALESCE($10::text, o.payment_method_id),
        -- Stripe's breakdown is recorded once, and the total becomes what Stripe charged with it.
        total = CASE WHEN o.money_breakdown IS NULL AND $11::jsonb IS NOT NULL THEN $12::integer ELSE o.total END,
        money_breakdown = COALESCE(o.money_breakdown, $11::jsonb),
        updated_at = now()
    FROM recorded
    WHERE o.id = recorded.order_id AND o.status = ANY($7::order_status[])
    RETURNING o.id, o.status, o.payment_intent_id, o.placed_event_sent_at, o.total, o.money_breakdown
  ), logged AS (
    INSERT INTO order_timeline (order_id, kind, detail)
    SELECT moved.id, $8, jsonb_build_object('stripeEvent', $2::text, 'type', $3::text)
    FROM moved
  )
  ${changedOrderResult("moved", ", target.terms_match")}`;

const recordTransitionSql = transitionSql("true");

// The terms are compared as the intake's ownership check compares them (src/orders/intake/
// stripe-event-plan.ts, ownershipProblems): the same id, the same total (the lines' at their
// prices before Stripe's breakdown is recorded, Stripe's total after), the currency in any case.
const recordPlacementSql = transitionSql(
  `(id = $13::uuid AND lower(currency) = lower($15::text)
    AND total = CASE WHEN money_breakdown IS NULL THEN $14::integer ELSE $16::integer END)`,
);

const recordAuthorizationLostSql = `
  WITH target AS (
    SELECT ${targetColumns} FROM orders WHERE payment_intent_id = $1
    ORDER BY created_at DESC LIMIT 1
  ), ${recordEventCte()}
  ), flagged AS (
    UPDATE orders o
    SET attention_reason = $4, updated_at = now()
    FROM recorded
    WHERE o.id = recorded.order_id
      AND o.status = ANY($5::order_status[])
      AND o.attention_reason IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM payments p
        WHERE p.order_id = o.id AND p.status IN ('captured', 'refunded', 'voided')
      )
    RETURNING o.id, o.status, o.payment_intent_id, o.placed_event_sent_at, o.total, o.money_breakdown
  ), logged AS (
    INSERT INTO order_timeline (order_id, kind, detail)
    SELECT flagged.id, ${timelineKindSql("authorization-lost")}, jsonb_build_object('stripeEvent', $2::text, 'reason', $4::text)
    FROM flagged
  )
  ${changedOrderResult("flagged")}`;

const recordMismatchSql = `
  WITH target AS (
    SELECT ${targetColumns} FROM orders WHERE checkout_session_id = $1
  ), ${recordEventCte()}
  ), flagged AS (
    UPDATE orders o
    SET attention_reason = COALESCE(o.attention_reason, $4), updated_at = now()
    FROM recorded
    WHERE o.id = recorded.order_id
    RETURNING o.id, o.status, o.payment_intent_id, o.placed_event_sent_at, o.total, o.money_breakdown
  ), logged AS (
    INSERT INTO order_timeline (order_id, kind, detail)
    SELECT flagged.id, ${timelineKindSql("payment-mismatch")},
           jsonb_build_object('stripeEvent', $2::text, 'type', $3::text, 'problems', $5::jsonb)
    FROM flagged
  )
  ${changedOrderResult("flagged")}`;

const recordDeclineSql = `
  WITH target AS (
    SELECT ${targetColumns} FROM orders WHERE id = $1::uuid
  ), ${recordEventCte()}
  ), noted AS (
    INSERT INTO order_timeline (order_id, kind, detail)
    SELECT target.id, ${timelineKindSql("checkout-payment-declined")}, $4::jsonb || jsonb_build_object('stripeEvent', $2::text)
    FROM target JOIN recorded ON recorded.order_id = target.id
    WHERE target.status IN ('pending', 'payment_processing')
    RETURNING order_id AS id
  )
  SELECT ${orderColumns("target", "target")},
         EXISTS (SELECT 1 FROM recorded) AS first_delivery,
         EXISTS (SELECT 1 FROM noted) AS changed
  FROM target`;

const findOrderSql = `
  SELECT ${orderColumns("o", "o")}, false AS first_delivery, false AS changed
  FROM orders o WHERE o.id = $1::uuid`;

const markAnnouncedSql = `
  WITH marked AS (
    UPDATE orders SET placed_event_sent_at = now(), updated_at = now()
    WHERE id = $1::uuid AND placed_event_sent_at IS NULL RETURNING id
  )
  INSERT INTO order_timeline (order_id, kind, detail)
  SELECT id, ${timelineKindSql("order-placed-sent")}, jsonb_build_object('stripeEvent', $2::text) FROM marked`;

/**
 * The intake's statements that return rows, for test/db/row-types.test.ts: it asks PostgreSQL to
 * describe each on the migrated schema and compares the columns with the row type read here.
 */
export const intakeStatements = {
  peekByCheckoutSession: peekSql(peekWhere.checkoutSessionId),
  peekByOrder: peekSql(peekWhere.orderId),
  peekByPaymentIntent: peekSql(peekWhere.paymentIntentId),
  recordTransition: recordTransitionSql,
  recordPlacement: recordPlacementSql,
  recordAuthorizationLost: recordAuthorizationLostSql,
  recordMismatch: recordMismatchSql,
  recordDecline: recordDeclineSql,
  findOrder: findOrderSql,
} as const;

/** $1–$12 of the transition statements. */
const transitionValues = (event: RecordedEvent, checkoutSessionId: string, change: StatusChange) => [
  checkoutSessionId,
  event.id,
  event.type,
  change.to,
  change.paymentIntentId,
  change.shippingAddress ? JSON.stringify(change.shippingAddress) : null,
  [...change.from],
  change.timelineKind,
  change.savedCard?.customerId ?? null,
  change.savedCard?.paymentMethodId ?? null,
  change.money ? JSON.stringify(change.money) : null,
  change.money?.total ?? null,
];

/**
 * The intake's statements in raw SQL on the `pg` pool under Prisma (sqlPool): a webhook's first
 * delivery runs three of them, and Prisma's per-query cost was the largest single item of its
 * CPU profile (docs/benchmarks.md). Each statement is named, so each connection parses and
 * plans it once rather than on every delivery.
 */
export function createIntakeRepository(db: Database): IntakeRepository {
  const pool = sqlPool(db);
  const query = async <T extends QueryResultRow>(name: string, text: string, values: unknown[]) =>
    (await pool.query<T>({ name: `intake-${name}`, text, values })).rows;

  return {
    async peek(eventId, key) {
      const [kind, value] =
        "checkoutSessionId" in key
          ? (["checkoutSessionId", key.checkoutSessionId] as const)
          : "orderId" in key
            ? (["orderId", key.orderId] as const)
            : (["paymentIntentId", key.paymentIntentId] as const);
      const rows = await query<Row & { recorded: boolean }>(`peek-${kind}`, peekSql(peekWhere[kind]), [
        eventId,
        value,
      ]);
      const row = rows[0];
      return row ? { order: snapshotOf(row), recorded: row.recorded } : { order: null, recorded: false };
    },

    async recordTransition(event, checkoutSessionId, change) {
      const values = transitionValues(event, checkoutSessionId, change);
      // It shares the placement's statement, terms check included (always true here).
      return outcomeOf(
        await query<Row & { terms_match: boolean }>("record-transition", recordTransitionSql, values),
      );
    },

    async recordPlacement(event, checkoutSessionId, change, terms) {
      const rows = await query<Row & { terms_match: boolean }>("record-placement", recordPlacementSql, [
        ...transitionValues(event, checkoutSessionId, change),
        terms.orderId,
        terms.total,
        terms.currency,
        terms.recordedTotal ?? terms.total,
      ]);
      return { ...outcomeOf(rows), termsMatch: rows[0]?.terms_match ?? false };
    },

    async recordAuthorizationLost(event, paymentIntentId, reason) {
      const rows = await query<Row>("record-authorization-lost", recordAuthorizationLostSql, [
        paymentIntentId,
        event.id,
        event.type,
        reason,
        [...uncapturedStatuses],
      ]);
      return outcomeOf(rows);
    },

    async recordMismatch(event, checkoutSessionId, reason, problems) {
      const rows = await query<Row>("record-mismatch", recordMismatchSql, [
        checkoutSessionId,
        event.id,
        event.type,
        reason,
        JSON.stringify(problems),
      ]);
      return outcomeOf(rows);
    },

    async recordDecline(event, orderId, detail) {
      const rows = await query<Row>("record-decline", recordDeclineSql, [
        orderId,
        event.id,
        event.type,
        JSON.stringify(detail),
      ]);
      return outcomeOf(rows);
    },

    async findOrder(orderId) {
      const row = (await query<Row>("find-order", findOrderSql, [orderId]))[0];
      return row ? snapshotOf(row) : null;
    },

    async markAnnounced(orderId, eventId) {
      const result = await pool.query({
        name: "intake-mark-announced",
        text: markAnnouncedSql,
        values: [orderId, eventId],
      });
      return (result.rowCount ?? 0) > 0;
    },
  };
}
