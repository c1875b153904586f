import { eventType } from "inngest";
import { z } from "zod";

/**
 * The events this service sends and reacts to. Each is validated with its schema before a
 * function's handler runs, so handlers can trust `event.data`.
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

export const orderCancelled = eventType("shop/order.cancelled", {
  schema: z.object({
    orderId: z.uuid(),
    reason: z.string().max(500).optional(),
  }),
});
export type OrderCancelledData = z.infer<typeof orderCancelled.schema>;

export const shipmentDelivered = eventType("shop/shipment.delivered", {
  schema: z.object({
    orderId: z.uuid(),
    trackingNumber: z.string().min(1),
    deliveredAt: z.iso.datetime(),
  }),
});
export type ShipmentDeliveredData = z.infer<typeof shipmentDelivered.schema>;
