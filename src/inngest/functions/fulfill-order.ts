import { NonRetriableError, StepError, type Inngest } from "inngest";
import { orderCancelled, orderPlaced, shipmentDelivered } from "../../events/contracts";
import type { WorkflowDependencies } from "../dependencies";
import { chargeCard } from "../steps/charge-card";
import { claimOrder, OrderVanishedError } from "../steps/claim-order";
import { compensate } from "../steps/compensate";
import { createShipment, parcelsOf } from "../steps/create-shipment";
import { awaitHoldRelease, waitOutFulfilmentHold } from "../steps/hold-fulfilment";
import { checkAddress } from "../steps/check-address";
import { markDelivered } from "../steps/mark-delivered";
import { reserveStock } from "../steps/reserve-stock";
import { Saga, undosOf } from "../steps/saga";
import { sendConfirmation } from "../steps/send-confirmation";
import { sendReviewRequest } from "../steps/send-review-request";
import { sendShortNotice } from "../steps/send-short-notice";
import type { ShipmentNotice } from "../../notifications/customer-messages";
import type { GuardRefusal } from "../../orders/fulfilment-records";

export const fulfillOrderFunctionId = "fulfill-order";

/**
 * What `find-booking` keeps: every parcel and, once all are delivered, the last delivery. A run
 * that memoised it before orders had several parcels kept parcel 1 as `notice` instead of
 * `parcels` (Inngest replays that output).
 */
interface FoundBooking {
  parcels?: ShipmentNotice[];
  notice?: ShipmentNotice | null;
  deliveredAt: string | null;
}

/**
 * fulfill-order's forward steps, in the order it runs them (src/inngest/steps: each file exports a
 * step with its undo). Their step ids are durable Inngest state: never rename one.
 */
export const fulfilmentSteps = [
  claimOrder,
  reserveStock,
  waitOutFulfilmentHold,
  chargeCard,
  sendShortNotice,
  checkAddress,
  awaitHoldRelease,
  createShipment,
  sendConfirmation,
  markDelivered,
  sendReviewRequest,
] as const;

/**
 * Everything a fulfilment can come to owe, in compensation order (release-stock, then
 * return-payment): what a run stopped before it could tell how far it got leaves to undo.
 */
export const fulfilmentUndos = undosOf(fulfilmentSteps);

/**
 * Fulfils one paid order as a saga: claim it, reserve stock, capture the payment, book the
 * shipment, e-mail the tracking link, then ask for a review after delivery (or after
 * REVIEW_DELAY). Each forward step runs through the run's Saga, which puts the step's undo first
 * in line once its outcome owes it; every failure before the parcel is booked runs the one
 * compensate() over what is owed. Each step is idempotent by a key derived from the order id, and
 * its write lands only while this run owns an uncancelled order (see
 * src/orders/fulfilment-records.ts), so a cancel that arrives while a step is in flight is never
 * overwritten by that step.
 */
export function createFulfillOrder(inngest: Inngest, deps: WorkflowDependencies) {
  const { settings } = deps;

  return inngest.createFunction(
    {
      id: fulfillOrderFunctionId,
      name: "Fulfil a paid order",
      triggers: [orderPlaced],
      retries: 5,
      // Inngest drops a second run with the same key within 24 hours; a re-drive sends a new key
      // (src/orders/redrive-order.ts, docs/fulfilment-saga.md) and the claim covers the rest.
      idempotency: "event.data.fulfilmentKey",
      // Counts executing steps: two orders of one customer interleave step by step but never run
      // a step at the same time (docs/fulfilment-saga.md).
      concurrency: [{ limit: 1, key: "event.data.customerId" }],
      cancelOn: [
        {
          event: orderCancelled.name,
          if: "async.data.orderId == event.data.orderId",
          timeout: settings.cancelWindow,
        },
      ],
      onFailure: async ({ event, error }) => {
        const original = event.data.event.data;
        await deps.alerts.runFailed({
          functionId: event.data.function_id,
          runId: event.data.run_id,
          orderId: original.orderId,
          customerId: original.customerId,
          error: { name: error.name, message: error.message },
        });
      },
    },
    async ({ event, step, runId }) => {
      const { orderId } = event.data;
      const saga = new Saga({ step, deps, orderId, runId });
      const { ctx } = saga;

      const claim = await saga.run(claimOrder);
      if (!claim.claimed) {
        if (claim.reason === "not-found") throw new OrderVanishedError(orderId);
        if (claim.reason === "cancel-requested") {
          // Cancelled before this run started, so no cancelOn fired and no cleanup run exists: this
          // run gives back whatever the checkout took (the authorization, the stock hold), as the
          // cleanup does.
          await compensate(ctx, fulfilmentUndos, () => ({
            status: "cancelled",
            reason: "cancelled before fulfilment started",
          }));
          return { orderId, skipped: "cancelled-before-start" as const };
        }
        return { orderId, skipped: claim.reason };
      }
      if (claim.booked) {
        // Re-driven after the parcel was booked (a failure at the delivery mark or the review
        // e-mail): stock, payment and label are done; resume from the booking, buying and
        // charging nothing again (redrive-order.ts, docs/fulfilment-saga.md).
        const booked = await step.run("find-booking", async (): Promise<FoundBooking | null> => {
          const found = await deps.shipments.findByOrder(orderId);
          if (found.length === 0) return null;
          const parcels = found.map(({ carrier, trackingNumber, trackingUrl, parcelNumber }) => ({
            carrier,
            trackingNumber,
            trackingUrl,
            parcelNumber,
          }));
          // Delivered only once every parcel is: then the last delivery stands for the event.
          const allDelivered = found.every((parcel) => parcel.deliveredAt);
          const last = Math.max(...found.map((parcel) => new Date(parcel.deliveredAt ?? 0).getTime()));
          return { parcels, deliveredAt: allDelivered ? new Date(last).toISOString() : null };
        });
        const parcels = booked ? (booked.parcels ?? (booked.notice ? [booked.notice] : [])) : [];
        return afterBooking(parcels, null, booked?.deliveredAt ?? null);
      }
      const owned = { claimId: claim.claimId };

      /**
       * A guarded write refused because the order was cancelled. Inside CANCEL_WINDOW the cancel
       * also cancelled this run and its cleanup undoes what it did; past it (a full refund at
       * Stripe stops the order at any time) nothing else will: the run undoes what it owes itself,
       * as the cleanup would. When both run, each undo changes nothing the other already undid,
       * and finishUnfulfilled lets the first end the order and send the one e-mail.
       */
      async function stop(reason: GuardRefusal) {
        if (reason === "cancelled") {
          await compensate(
            ctx,
            saga.owed,
            () => ({ status: "cancelled", reason: "cancelled by request" }),
            owned,
          );
        }
        return { orderId, stopped: reason };
      }

      const reservation = await saga.run(reserveStock, claim);
      if (!reservation.ok) {
        if (reservation.reason !== "out_of_stock") return stop(reservation.reason);
        // A business outcome, not an ops failure: the customer gets their money back and an e-mail.
        await compensate(
          ctx,
          saga.owed,
          () => ({ status: "cancelled_out_of_stock", sku: reservation.sku }),
          owned,
        );
        return { orderId, outcome: "cancelled_out_of_stock" as const };
      }

      // FULFILMENT_HOLD: a cancel in this window takes no money and buys no label.
      await saga.run(waitOutFulfilmentHold, reservation);

      let charge;
      try {
        charge = await saga.run(chargeCard, claim, event.data.paymentIntentId, reservation.short);
      } catch (error) {
        if (!(error instanceof StepError)) throw error;
        // Declined, or failed on every attempt: Stripe's state decides whether money was taken.
        await compensate(
          ctx,
          saga.owed,
          (settlement) =>
            settlement === "refunded"
              ? { status: "cancelled", reason: `payment taken but not recorded: ${error.message}` }
              : { status: "payment_failed", error: error.message },
          owned,
        );
        // The customer is told and made whole; failing the run is how ops hear about it.
        throw new NonRetriableError(`Payment for order ${orderId} failed: ${error.message}`, {
          cause: error,
        });
      }
      if (!charge.charged) return stop(charge.stopped);
      // Partial fulfilment: the customer hears at once which lines do not ship and what of the
      // money was not taken (or refunded).
      if (reservation.short && charge.short) await saga.run(sendShortNotice, reservation.short, charge.short);
      // The parcel carries only what was reserved (its weight too).
      const shipping = reservation.short ? { ...claim, lines: reservation.reserved } : claim;

      // An address the carrier cannot deliver to puts the order on hold, and the customer is asked.
      const address = await saga.run(checkAddress, shipping);
      // On hold (ops, the address check, a dispute): no label until released; an address the
      // carrier rejected under another hold is held once that one is released.
      const hold = await saga.run(awaitHoldRelease, address);
      if (hold.held && !hold.released) return { orderId, stopped: "held" as const };

      const shipment = await saga.run(createShipment, shipping, address);
      if (!shipment.shipped) {
        // Held after the last look (decision 0170): nothing bought; the release re-drives (0201).
        if (shipment.stopped === "held") return { orderId, stopped: "held" as const };
        return stop(shipment.stopped);
      }
      // The parcel is booked (or, digital-only, nothing needs one): from here a failure is for ops
      // (and a re-drive), not an undo.
      return afterBooking(parcelsOf(shipment), charge.paymentId, null);

      /**
       * From the booked parcels on: the tracking e-mail, the delivery, the review request. The
       * carrier webhook publishes shop/shipment.delivered (one id per order) only once the last
       * current parcel is delivered, so `wait-for-delivery` resumes once, whatever the count.
       */
      async function afterBooking(
        parcels: readonly ShipmentNotice[],
        paymentId: string | null,
        deliveredAt: string | null,
      ) {
        const booking = parcels[0] ?? null;
        if (booking) await saga.run(sendConfirmation, parcels);

        // A re-drive of a delivered order cannot hear the delivery event again: the record stands in.
        const delivery =
          booking && deliveredAt
            ? { data: { orderId, trackingNumber: booking.trackingNumber, deliveredAt } }
            : booking
              ? await step.waitForEvent("wait-for-delivery", {
                  event: shipmentDelivered,
                  timeout: settings.reviewDelay,
                  if: "async.data.orderId == event.data.orderId",
                })
              : null;
        if (!booking) {
          await step.sleep("wait-after-delivery", settings.reviewAfterDelivery);
        } else if (delivery) {
          // The carrier webhook marks the order itself (decision 0195); an event without
          // `orderMarked` (sent before, or by a re-drive's stand-in) leaves it to this step.
          if (!("orderMarked" in delivery.data && delivery.data.orderMarked))
            await saga.run(markDelivered, delivery.data);
          await step.sleep("wait-after-delivery", settings.reviewAfterDelivery);
        }

        await saga.run(sendReviewRequest, delivery !== null || !booking);

        return { orderId, paymentId, trackingNumber: booking?.trackingNumber ?? null };
      }
    },
  );
}
