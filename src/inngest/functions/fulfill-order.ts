import { NonRetriableError, StepError, type Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";
import { orderCancelled, orderPlaced, shipmentDelivered } from "../../events/contracts";
import { chargeCard } from "../steps/charge-card";
import { claimOrder, OrderVanishedError } from "../steps/claim-order";
import { compensate } from "../steps/compensate";
import { Compensations } from "../steps/compensations";
import { createShipment } from "../steps/create-shipment";
import { releaseStock, releaseStockStepId } from "../steps/release-stock";
import { reserveStock } from "../steps/reserve-stock";
import { returnPayment, returnPaymentStepId } from "../steps/return-payment";
import { sendConfirmation } from "../steps/send-confirmation";
import { sendReviewRequest } from "../steps/send-review-request";

export const fulfillOrderFunctionId = "fulfill-order";

/**
 * Fulfils one paid order as a saga: claim it, reserve stock, capture the payment, book the
 * shipment, e-mail the tracking link, then ask for a review after delivery (or after
 * REVIEW_DELAY). Each forward step (src/inngest/steps) registers its undo right after it
 * succeeds; every failure before the parcel is booked runs the one compensate(). Each step is
 * idempotent by a key derived from the order id, and its write lands only while this run owns an
 * uncancelled order (see src/orders/fulfilment-records.ts), so a cancel that arrives while a step
 * is in flight is never overwritten by that step.
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
      const ctx = { step, deps, orderId, runId };
      const undo = new Compensations();

      const claim = await claimOrder(ctx);
      if (!claim.claimed) {
        if (claim.reason === "not-found") throw new OrderVanishedError(orderId);
        if (claim.reason === "cancel-requested") {
          // Cancelled before this run started, so no cancelOn fired and no cleanup run exists: this
          // run gives back what the checkout took, the authorization and the stock hold.
          undo.add(returnPaymentStepId, () => returnPayment(ctx));
          undo.add(releaseStockStepId, () => releaseStock(ctx));
          await compensate(ctx, undo, () => ({
            status: "cancelled",
            reason: "cancelled before fulfilment started",
          }));
          return { orderId, skipped: "cancelled-before-start" as const };
        }
        return { orderId, skipped: claim.reason };
      }
      const owned = { claimId: claim.claimId };
      // The authorization taken at checkout is this run's to give back from here on.
      undo.add(returnPaymentStepId, () => returnPayment(ctx));

      const reservation = await reserveStock(ctx, claim);
      if (!reservation.ok) {
        if (reservation.reason !== "out_of_stock") return { orderId, stopped: reservation.reason };
        // A business outcome, not an ops failure: the customer gets their money back and an e-mail.
        await compensate(
          ctx,
          undo,
          () => ({ status: "cancelled_out_of_stock", sku: reservation.sku }),
          owned,
        );
        return { orderId, outcome: "cancelled_out_of_stock" as const };
      }
      undo.add(releaseStockStepId, () => releaseStock(ctx));

      let charge;
      try {
        charge = await chargeCard(ctx, claim, event.data.paymentIntentId);
      } catch (error) {
        if (!(error instanceof StepError)) throw error;
        // Declined, or failed on every attempt: Stripe's state decides whether money was taken.
        await compensate(
          ctx,
          undo,
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
      if (!charge.charged) return { orderId, stopped: charge.stopped };

      const shipment = await createShipment(ctx, claim);
      if (!shipment.shipped) return { orderId, stopped: shipment.stopped };
      // The parcel is booked (or, digital-only, nothing needs one): from here a failure is for ops
      // (and a re-drive), not an undo.
      const booking = shipment.booking;
      if (booking) await sendConfirmation(ctx, booking);

      const delivery = booking
        ? await step.waitForEvent("wait-for-delivery", {
            event: shipmentDelivered.name,
            timeout: settings.reviewDelay,
            if: "async.data.orderId == event.data.orderId",
          })
        : null;
      if (!booking) {
        await step.sleep("wait-after-delivery", settings.reviewAfterDelivery);
      } else if (delivery) {
        await step.run("mark-delivered", async () => {
          await deps.orders.transition(orderId, ["shipped"], "delivered");
          await deps.timeline.record(orderId, "delivered", { deliveredAt: delivery.data.deliveredAt }, runId);
        });
        await step.sleep("wait-after-delivery", settings.reviewAfterDelivery);
      }

      await sendReviewRequest(ctx, delivery !== null || !booking);

      return { orderId, paymentId: charge.paymentId, trackingNumber: booking?.trackingNumber ?? null };
    },
  );
}
