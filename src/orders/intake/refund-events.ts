import type Stripe from "stripe";
import type { Alerter } from "../../alerts";
import type { Database } from "../../db/client";
import type { EventPublisher } from "../../events/publisher";
import type { Logger } from "../../logger";
import { refundedOfCaptured } from "../../payments/payment-gateway";
import type { Timeline } from "../../timeline/timeline";
import { requestStop } from "../cancel-order";
import type { OrderRepository, OrderStatus } from "../order-repository";
import type { Refunds } from "../refund-order";

/** The Stripe events about money given back, whoever gave it (this service, the Dashboard, another system). */
export const refundEventTypes = ["charge.refunded", "refund.created", "refund.updated", "refund.failed"];

export const isRefundEvent = (event: Stripe.Event): boolean => refundEventTypes.includes(event.type);

/** A fulfilment that has not bought its label yet can still be stopped. */
const stoppable: readonly OrderStatus[] = ["authorized", "paid", "fulfilling"];
const finished: readonly OrderStatus[] = ["cancelled", "cancelled_out_of_stock", "payment_failed", "expired"];

export interface RefundEventsDeps {
  db: Database;
  stripe: Stripe;
  orders: Pick<OrderRepository, "requestCancellation" | "flagForOps">;
  publisher: EventPublisher;
  timeline: Pick<Timeline, "record">;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
  /** Hands the label back to the carrier; unset, ops are told to stop the parcel. */
  voidLabel?: (orderId: string) => Promise<unknown>;
  /**
   * Records a refund this service asked for that Stripe says succeeded, as its request would
   * have (src/orders/refund-order.ts): the request may have died after Stripe's answer.
   */
  refunds?: Pick<Refunds, "recordLanded">;
}

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value == null ? null : typeof value === "string" ? value : value.id;

function ourStatus(status: string | null): "pending" | "succeeded" | "failed" {
  if (status === "succeeded") return "succeeded";
  if (status === "failed" || status === "canceled") return "failed";
  return "pending";
}

/** What the webhook's intake answers for a refund event (a subset of its own results). */
export interface RefundEventResult {
  outcome: "processed" | "duplicate" | "ignored" | "unknown-order";
  orderId?: string;
  announced: false;
}

export interface RefundEvents {
  handle(event: Stripe.Event): Promise<RefundEventResult>;
}

/**
 * Records every refund of an order's payment, idempotent by Stripe's refund id, and acts on a
 * full one. The event only says which PaymentIntent to look at: Stripe's current list of its
 * refunds and its charge decide (a late, repeated or out-of-order event converges on the same
 * state). A refund this service asked for (the admin refund's row, named in its metadata) is
 * settled on its own row; any other gets a row of its own.
 *
 * Refunded in full before the label is bought: the fulfilment is stopped through the cancel path
 * (the run's cancel, then its cleanup releases the stock and e-mails the customer once). After the
 * label: ops are told, since the parcel is booked.
 */
export function createRefundEvents(deps: RefundEventsDeps): RefundEvents {
  const { db, stripe } = deps;
  const logger = deps.logger.child({ component: "refund-events" });

  async function recordRefund(
    orderId: string,
    refund: Stripe.Refund,
    atStripe: number | null,
  ): Promise<boolean> {
    const status = ourStatus(refund.status);
    const requestId = refund.metadata?.refundRequestId;
    if (requestId && status === "succeeded" && deps.refunds) {
      await deps.refunds.recordLanded({
        orderId,
        requestId,
        providerId: refund.id,
        by: refund.metadata?.requestedBy,
        atStripe,
      });
    }
    if (requestId) {
      const ours = await db.refund.updateMany({
        where: { id: requestId, orderId },
        data: { providerId: refund.id, status },
      });
      if (ours.count > 0) return false;
    }
    const existing = await db.refund.findUnique({ where: { providerId: refund.id }, select: { id: true } });
    if (existing) {
      await db.refund.update({ where: { providerId: refund.id }, data: { status } });
      return false;
    }
    try {
      await db.refund.create({
        data: {
          orderId,
          amount: refund.amount,
          currency: refund.currency,
          reason: refund.reason ?? "refunded at Stripe",
          status,
          providerId: refund.id,
        },
      });
    } catch (error) {
      // Two deliveries recording the same refund at once: the unique Stripe id keeps one row.
      if ((error as { code?: string }).code === "P2002") return false;
      throw error;
    }
    return true;
  }

  return {
    async handle(event) {
      const object = event.data.object as Stripe.Charge | Stripe.Refund;
      const intentId = idOf(object.payment_intent);
      if (!intentId) return { outcome: "ignored", announced: false };
      const order = await db.order.findFirst({
        where: { OR: [{ paymentIntentId: intentId }, { payment: { providerId: intentId } }] },
        select: {
          id: true,
          status: true,
          cancelRequestedAt: true,
          shipments: { select: { id: true }, take: 1 },
        },
      });
      if (!order) {
        logger.warn({ eventId: event.id, type: event.type, intentId }, "refund for an order we do not know");
        return { outcome: "unknown-order", announced: false };
      }
      const orderId = order.id;

      const [intent, listed] = await Promise.all([
        stripe.paymentIntents.retrieve(intentId, { expand: ["latest_charge"] }),
        stripe.refunds.list({ payment_intent: intentId, limit: 100 }),
      ]);
      const charge = typeof intent.latest_charge === "object" ? intent.latest_charge : null;
      const recorded: Stripe.Refund[] = [];
      const atStripe = charge ? refundedOfCaptured(charge) : null;
      for (const refund of listed.data) {
        if (await recordRefund(orderId, refund, atStripe)) recorded.push(refund);
      }
      for (const refund of recorded) {
        await deps.timeline.record(orderId, "refund-recorded", {
          refundId: refund.id,
          amount: refund.amount,
          currency: refund.currency,
          status: refund.status,
          stripeEvent: event.id,
        });
      }

      const captured = charge?.amount_captured ?? 0;
      // The captured money given back: a partial capture's released remainder is not a refund.
      const refunded = charge ? refundedOfCaptured(charge) : 0;
      if (captured > 0) {
        await db.payment.updateMany({
          where: { orderId },
          data: { amountRefunded: refunded, ...(refunded >= captured ? { status: "refunded" } : {}) },
        });
      }
      const full = captured > 0 && refunded >= captured;
      if (full && !finished.includes(order.status)) {
        const booked = order.shipments.length > 0;
        if (!booked && stoppable.includes(order.status)) {
          // A repeat (the refund's other events) finds the stop already asked.
          if (order.cancelRequestedAt !== null) return { outcome: "duplicate", orderId, announced: false };
          const stopped = await requestStop(deps, {
            orderId,
            cancellableFrom: stoppable,
            reason: "refunded in full at Stripe",
            by: "stripe",
          });
          logger.info({ orderId, eventId: event.id, stopped }, "refunded in full before shipping: stopped");
        } else if (
          deps.voidLabel &&
          booked &&
          recorded.length > 0 &&
          ["fulfilling", "shipped"].includes(order.status)
        ) {
          // The label void tells ops itself when the parcel has moved or the carrier refuses.
          const voided = await deps.voidLabel(orderId);
          logger.info({ orderId, eventId: event.id, voided }, "refunded in full after the label: voided");
        } else if (booked && recorded.length > 0 && ["fulfilling", "shipped"].includes(order.status)) {
          await deps.orders.flagForOps(orderId, "refunded in full at Stripe after the label was bought");
          await deps.timeline.record(orderId, "refund-needs-ops", { refunded, stripeEvent: event.id });
          await deps.alerts.notify({
            key: `refunded-after-label-${orderId}`,
            title: "Order refunded in full after its label was bought",
            fields: {
              orderId,
              refunded,
              currency: intent.currency,
              action: "Stop the parcel with the carrier (void the label if it has not moved)",
            },
          });
        }
      }
      return { outcome: recorded.length > 0 || full ? "processed" : "duplicate", orderId, announced: false };
    },
  };
}
