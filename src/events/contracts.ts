import { eventType } from "inngest";
import { z } from "zod";

/**
 * The events this service sends and reacts to: each one's name, data schema and event id, in one
 * place below the domains that send them and the Inngest functions that react to them. Each is
 * validated with its schema before a function's handler runs, so handlers can trust `event.data`;
 * the sending side builds them with the `...Event` functions below, which give each its id (Inngest
 * drops a second event with the same id within 24 hours).
 */

export const orderPlaced = eventType("shop/order.placed", {
  schema: z.object({
    orderId: z.uuid(),
    customerId: z.string().min(1),
    email: z.email(),
    total: z.number().int().nonnegative(),
    currency: z.string().length(3),
    paymentIntentId: z.string().nullable(),
    /** fulfill-order's idempotency key: the order id, plus the re-drive generation once re-driven. */
    fulfilmentKey: z.string().min(1),
  }),
});
export type OrderPlacedData = z.infer<typeof orderPlaced.schema>;

/**
 * Inngest deduplicates events by id, and fulfill-order runs by `fulfilmentKey`, for 24 hours; the
 * claim step covers the time after that. A re-drive (generation n > 0) gets a fresh id and key of
 * its own, so Inngest starts it at once; see docs/fulfilment-saga.md.
 */
export const orderPlacedEventId = (orderId: string, generation = 0): string =>
  generation === 0 ? `order-placed-${orderId}` : `order-placed-${orderId}-redrive-${generation}`;
export const fulfilmentKey = (orderId: string, generation = 0): string =>
  generation === 0 ? orderId : `${orderId}/redrive-${generation}`;

/** shop/order.placed for the order's fulfilment, generation 0 or a re-drive's. */
export const orderPlacedEvent = (data: OrderPlacedData, generation = 0) => ({
  name: orderPlaced.name,
  id: orderPlacedEventId(data.orderId, generation),
  // A copy: the encryption middleware rewrites the data of an event being sent.
  data: { ...data },
});
export type OrderPlacedEvent = ReturnType<typeof orderPlacedEvent>;

export const orderCancelled = eventType("shop/order.cancelled", {
  schema: z.object({
    orderId: z.uuid(),
    reason: z.string().max(500).optional(),
  }),
});
export type OrderCancelledData = z.infer<typeof orderCancelled.schema>;

/** One cancellation per order: a second request (the API and the console, say) wakes no one twice. */
export const orderCancelledEvent = (data: OrderCancelledData) => ({
  name: orderCancelled.name,
  id: `order-cancelled-${data.orderId}`,
  data: { ...data },
});

export const shipmentDelivered = eventType("shop/shipment.delivered", {
  schema: z.object({
    orderId: z.uuid(),
    trackingNumber: z.string().min(1),
    deliveredAt: z.iso.datetime(),
    // The carrier webhook moved the order to `delivered` itself: the run has no step to take for it.
    orderMarked: z.boolean().optional(),
  }),
});
export type ShipmentDeliveredData = z.infer<typeof shipmentDelivered.schema>;

/**
 * Published once the order's last parcel is delivered (every current parcel: a re-shipped
 * parcel counts by its new label), with that parcel's tracking number and time. A repeated
 * delivery notice (the carrier retries) publishes the same id, so no run wakes twice.
 */
export const shipmentDeliveredEvent = (data: ShipmentDeliveredData) => ({
  name: shipmentDelivered.name,
  id: `shipment-delivered-${data.orderId}`,
  data: { ...data },
});
export type ShipmentDeliveredEvent = ReturnType<typeof shipmentDeliveredEvent>;

/** A bought label was handed back to the carrier: track-label-refund follows its status. */
export const labelRefundRequested = eventType("shop/label.refund-requested", {
  schema: z.object({ orderId: z.uuid() }),
});
export type LabelRefundRequestedData = z.infer<typeof labelRefundRequested.schema>;

/**
 * One tracking run per order's handed-back labels (a repeated request wakes no second one); a
 * re-shipped parcel's old label gets its own, by its shipment id. Each run follows every
 * submitted label of the order, so two at once record each change once (compare-and-set).
 */
export const labelRefundRequestedEvent = (data: LabelRefundRequestedData, shipmentId?: string) => ({
  name: labelRefundRequested.name,
  id: `label-refund-requested-${data.orderId}${shipmentId ? `-${shipmentId}` : ""}`,
  data: { ...data },
});

/** A fulfilment hold ended (released by ops, or the address corrected): the waiting run goes on. */
export const holdReleased = eventType("shop/order.hold-released", {
  schema: z.object({ orderId: z.uuid(), holdId: z.string().min(1) }),
});
export type HoldReleasedData = z.infer<typeof holdReleased.schema>;

/** Each hold is released once: `holdId` is when it was placed, so a later hold gets a new id. */
export const holdReleasedEvent = (data: HoldReleasedData) => ({
  name: holdReleased.name,
  id: `hold-released-${data.orderId}-${data.holdId}`,
  data: { ...data },
});

/** A return was asked for (the customer's page, ops): process-return runs it, once per return. */
export const returnRequested = eventType("shop/return.requested", {
  schema: z.object({ returnId: z.uuid(), orderId: z.uuid() }),
});
export type ReturnRequestedData = z.infer<typeof returnRequested.schema>;
export const returnRequestedEvent = (data: ReturnRequestedData) => ({
  name: returnRequested.name,
  id: `return-requested-${data.returnId}`,
  data: { ...data },
});

/** Ops approved a return that waited for them (RETURN_APPROVAL=ops). */
export const returnApproved = eventType("shop/return.approved", {
  schema: z.object({ returnId: z.uuid(), orderId: z.uuid() }),
});
export const returnApprovedEvent = (data: z.infer<typeof returnApproved.schema>) => ({
  name: returnApproved.name,
  id: `return-approved-${data.returnId}`,
  data: { ...data },
});

/**
 * The returned parcel arrived (its tracker said delivered, or ops received it by hand): one per
 * return, so the carrier repeating its event wakes no run twice.
 */
export const returnReceived = eventType("shop/return.received", {
  schema: z.object({
    returnId: z.uuid(),
    orderId: z.uuid(),
    condition: z.enum(["resellable", "damaged"]),
  }),
});
export type ReturnReceivedData = z.infer<typeof returnReceived.schema>;
export const returnReceivedEvent = (data: ReturnReceivedData) => ({
  name: returnReceived.name,
  id: `return-received-${data.returnId}`,
  data: { ...data },
});

/** Ops rejected a return (or it was cancelled): the run stops (cancelOn), its cleanup undoes. */
export const returnCancelled = eventType("shop/return.cancelled", {
  schema: z.object({ returnId: z.uuid(), orderId: z.uuid(), reason: z.string().max(500).optional() }),
});
export const returnCancelledEvent = (data: z.infer<typeof returnCancelled.schema>) => ({
  name: returnCancelled.name,
  id: `return-cancelled-${data.returnId}`,
  data: { ...data },
});

/**
 * A return's Checkout Session for its exchange's difference was paid (the Stripe webhook, after
 * reading the session at Stripe): process-return, waiting for it, ships the exchange. Its id is
 * the session's, so a second delivery of the webhook sends nothing new.
 */
export const exchangePaid = eventType("shop/exchange.paid", {
  schema: z.object({ returnId: z.uuid(), orderId: z.uuid(), checkoutSessionId: z.string().min(1) }),
});
export const exchangePaidEvent = (data: z.infer<typeof exchangePaid.schema>) => ({
  name: exchangePaid.name,
  id: `exchange-paid-${data.checkoutSessionId}`,
  data: { ...data },
});

/**
 * An e-mail the mail server did not take (or another attempt holds) and that now waits in the
 * outbox: send-held-back-emails, batched, retries it when its backoff is due. One id per attempt,
 * so a retried step sends the event once.
 */
export const emailQueued = eventType("shop/email.queued", {
  schema: z.object({ idempotencyKey: z.string().min(1), attempts: z.number().int().nonnegative() }),
});
export const emailQueuedEvent = (data: z.infer<typeof emailQueued.schema>) => ({
  name: emailQueued.name,
  id: `email-queued-${data.idempotencyKey}-${data.attempts}`,
  data: { ...data },
});

/**
 * An ops alert stored in its outbox: deliver-alert-group, debounced per group over
 * ALERT_GROUP_WINDOW, sends the group as one Slack message. One id per alert key.
 */
export const opsAlertQueued = eventType("shop/ops-alert.queued", {
  schema: z.object({ group: z.string().min(1), alertKey: z.string().min(1) }),
});
export const opsAlertQueuedEvent = (data: z.infer<typeof opsAlertQueued.schema>) => ({
  name: opsAlertQueued.name,
  id: `ops-alert-queued-${data.alertKey}`,
  data: { ...data },
});

/**
 * A checkout took stock down to a product's low-stock threshold (the statement that took it said
 * so): watch-low-stock claims the crossing and alerts ops once.
 */
export const stockLow = eventType("shop/stock.low", {
  schema: z.object({ skus: z.array(z.string().min(1)).min(1) }),
});
/** One per checkout that took the stock down (`orderId`, the checkout's order). */
export const stockLowEvent = (data: z.infer<typeof stockLow.schema>, orderId: string) => ({
  name: stockLow.name,
  id: `stock-low-${orderId}`,
  data: { skus: [...data.skus] },
});

/** Every event this service sends, as the publisher takes it. */
export type OutgoingEvent =
  | OrderPlacedEvent
  | ReturnType<typeof orderCancelledEvent>
  | ShipmentDeliveredEvent
  | ReturnType<typeof labelRefundRequestedEvent>
  | ReturnType<typeof holdReleasedEvent>
  | ReturnType<typeof returnRequestedEvent>
  | ReturnType<typeof returnApprovedEvent>
  | ReturnType<typeof returnReceivedEvent>
  | ReturnType<typeof returnCancelledEvent>
  | ReturnType<typeof exchangePaidEvent>
  | ReturnType<typeof emailQueuedEvent>
  | ReturnType<typeof opsAlertQueuedEvent>
  | ReturnType<typeof stockLowEvent>;

/**
 * Inngest's own event for a run that was cancelled (`cancelOn`, or the REST API): it carries the
 * cancelled run's function and run ids and its triggering event (checked against Inngest's Go
 * executor). The cleanup after a cancelled fulfilment is triggered by it.
 */
export const functionCancelled = eventType("inngest/function.cancelled", {
  schema: z.object({
    function_id: z.string(),
    run_id: z.string(),
    event: z
      .object({ data: z.object({ orderId: z.string(), returnId: z.string() }).partial() })
      .partial()
      .optional(),
  }),
});
