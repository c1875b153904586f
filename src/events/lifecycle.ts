import { eventType } from "inngest";
import { z } from "zod";

/**
 * The order's lifecycle as events a shop's own code can listen to (its ERP, accounting, CRM, its
 * own Inngest functions): facts that already happened, each published once with a stable event
 * id by the lifecycle outbox (src/events/lifecycle-outbox.ts, docs/lifecycle-events.md).
 *
 * They are NOT the workflow's commands (src/events/contracts.ts): nothing of ours reacts to them,
 * and a shop function reacting to them cannot disturb a fulfilment. Several facts share a word
 * with a command (`shop/order.cancelled` asks a run to stop; `shop/order.cancelled.v1` says the
 * order ended cancelled), so the version is part of the name: the two never meet one trigger.
 *
 * Versioned by a name suffix (decision 0196): a trigger names exactly the version its handler
 * understands, and a breaking v2 can be published beside v1 for as long as shops migrate. Within
 * a version fields are only ever added, never removed or retyped.
 *
 * The data is built inside the transaction that records the fact (the outbox trigger in
 * prisma/migrations/20270113000000_lifecycle_events): amounts in the currency's minor unit,
 * times in UTC ISO 8601. No customer personal data (e-mail, address) is carried.
 */

const occurredAt = z.iso.datetime();
const orderFact = { orderId: z.uuid(), occurredAt };

export const lifecycleOrderPaid = eventType("shop/order.paid.v1", {
  schema: z.object({
    ...orderFact,
    /** What was taken (or authorized and then captured), minor units. */
    amount: z.number().int().nonnegative(),
    currency: z.string().length(3),
    customerId: z.string().min(1),
  }),
});

export const lifecycleFulfilmentHeld = eventType("shop/order.fulfilment-held.v1", {
  schema: z.object({ ...orderFact, reason: z.string().min(1), note: z.string().optional() }),
});

export const lifecycleFulfilmentReleased = eventType("shop/order.fulfilment-released.v1", {
  schema: z.object({ ...orderFact, reason: z.string().min(1) }),
});

/** One per parcel (a re-shipped parcel's new label is a new one), with its tracking. */
export const lifecycleOrderShipped = eventType("shop/order.shipped.v1", {
  schema: z.object({
    ...orderFact,
    parcelNumber: z.number().int().positive(),
    carrier: z.string().min(1),
    trackingNumber: z.string().min(1),
    trackingUrl: z.string().nullable(),
  }),
});

/** The order's last parcel arrived (or, with nothing to ship, the order was done). */
export const lifecycleOrderDelivered = eventType("shop/order.delivered.v1", {
  schema: z.object({ ...orderFact }),
});

export const lifecycleOrderCancelled = eventType("shop/order.cancelled.v1", {
  schema: z.object({ ...orderFact, reason: z.enum(["cancelled", "out-of-stock"]) }),
});

/** Where a refund came from. */
export const refundSources = ["ops", "stripe-dashboard", "return", "dispute", "workflow"] as const;
export type RefundSource = (typeof refundSources)[number];

/** One per refund (its id is Stripe's refund or dispute id), partial ones included. */
export const lifecycleOrderRefunded = eventType("shop/order.refunded.v1", {
  schema: z.object({
    ...orderFact,
    /** Stripe's refund id (`re_…`), or the dispute's (`dp_…`) for a lost dispute's withdrawal. */
    refundId: z.string().min(1),
    amount: z.number().int().positive(),
    currency: z.string().length(3),
    source: z.enum(refundSources),
  }),
});

/** The order cannot go on without someone: its payment failed, or its run failed (ops may re-drive). */
export const lifecycleOrderFailed = eventType("shop/order.failed.v1", {
  schema: z.object({ ...orderFact, reason: z.enum(["payment-failed", "run-failed"]) }),
});

const returnFact = { ...orderFact, returnId: z.uuid() };

export const lifecycleReturnRequested = eventType("shop/return.requested.v1", {
  schema: z.object({ ...returnFact }),
});

export const lifecycleReturnReceived = eventType("shop/return.received.v1", {
  schema: z.object({ ...returnFact, condition: z.enum(["resellable", "damaged"]).nullable() }),
});

export const lifecycleReturnRefunded = eventType("shop/return.refunded.v1", {
  schema: z.object({
    ...returnFact,
    /** Refunded for the return (0 when the order was refunded by other means already). */
    amount: z.number().int().nonnegative(),
    fee: z.number().int().nonnegative(),
    currency: z.string().length(3),
  }),
});

/** A product's stock fell to its low-stock threshold (once per crossing). */
export const lifecycleStockLow = eventType("shop/stock.low.v1", {
  schema: z.object({
    sku: z.string().min(1),
    stockOnHand: z.number().int(),
    threshold: z.number().int(),
    occurredAt,
  }),
});

/** Every lifecycle event, by name: the outbox checks a row's data against its schema before sending. */
export const lifecycleEvents = {
  [lifecycleOrderPaid.name]: lifecycleOrderPaid,
  [lifecycleFulfilmentHeld.name]: lifecycleFulfilmentHeld,
  [lifecycleFulfilmentReleased.name]: lifecycleFulfilmentReleased,
  [lifecycleOrderShipped.name]: lifecycleOrderShipped,
  [lifecycleOrderDelivered.name]: lifecycleOrderDelivered,
  [lifecycleOrderCancelled.name]: lifecycleOrderCancelled,
  [lifecycleOrderRefunded.name]: lifecycleOrderRefunded,
  [lifecycleOrderFailed.name]: lifecycleOrderFailed,
  [lifecycleReturnRequested.name]: lifecycleReturnRequested,
  [lifecycleReturnReceived.name]: lifecycleReturnReceived,
  [lifecycleReturnRefunded.name]: lifecycleReturnRefunded,
  [lifecycleStockLow.name]: lifecycleStockLow,
} as const;

export type LifecycleEventName = keyof typeof lifecycleEvents;
export type LifecycleEventData<Name extends LifecycleEventName> = z.infer<
  (typeof lifecycleEvents)[Name]["schema"]
>;

export function isLifecycleEventName(name: string): name is LifecycleEventName {
  return Object.hasOwn(lifecycleEvents, name);
}

/**
 * A lifecycle event's data checked against its schema: the one place the outbox's rows (built in
 * SQL) meet the typed contract. Throws on an unknown name or data that does not fit.
 */
export function parseLifecycleEvent(name: string, data: unknown): { name: LifecycleEventName; data: object } {
  if (!isLifecycleEventName(name)) throw new Error(`not a lifecycle event: ${name}`);
  const parsed = (lifecycleEvents[name].schema as z.ZodType<object>).safeParse(data);
  if (!parsed.success) throw new Error(`${name}: ${parsed.error.message}`);
  return { name, data: parsed.data };
}
