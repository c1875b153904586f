import { randomUUID } from "node:crypto";
import { NonRetriableError, StepError, type Inngest } from "inngest";
import { PaymentRejectedError } from "../../payments/payment-gateway";
import type { WorkflowDependencies } from "../dependencies";
import { orderCancelled, orderPlaced, shipmentDelivered } from "../events";
import { cancelOrder, releaseStock, returnPayment } from "../steps/compensation";

export const fulfillOrderFunctionId = "fulfill-order";

class OrderVanishedError extends NonRetriableError {
  constructor(orderId: string) {
    super(`Order ${orderId} does not exist`);
  }
}

class OrderNotPaidYetError extends Error {
  constructor(orderId: string) {
    super(`Order ${orderId} is not paid yet; the claim will be retried`);
    this.name = "OrderNotPaidYetError";
  }
}

/**
 * Fulfils one paid order: claim it, reserve stock, capture the payment, book the shipment,
 * e-mail the tracking link, then ask for a review after delivery (or after REVIEW_DELAY).
 * Every step does one side effect and is idempotent by a key derived from the order id.
 */
export function createFulfillOrder(inngest: Inngest, deps: WorkflowDependencies) {
  const { settings } = deps;

  return inngest.createFunction(
    {
      id: fulfillOrderFunctionId,
      name: "Fulfil a paid order",
      triggers: [orderPlaced],
      retries: 5,
      // Inngest drops a second run for the same order within 24 hours; the claim covers the rest.
      idempotency: "event.data.orderId",
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
      const context = { step, deps, orderId, runId };

      const claimId = await step.run("claim-id", () => randomUUID());
      const claim = await step.run("claim", async () => {
        const outcome = await deps.orders.claim(orderId, claimId);
        if (!outcome.claimed && outcome.reason === "not-paid-yet") {
          // The event can overtake the commit that records the payment; retrying lets it land.
          throw new OrderNotPaidYetError(orderId);
        }
        if (!outcome.claimed) {
          if (outcome.reason !== "not-found")
            await deps.timeline.record(orderId, "claim-lost", { reason: outcome.reason }, runId);
          return outcome;
        }
        const order = await deps.orders.findForFulfilment(orderId);
        if (!order) throw new OrderVanishedError(orderId);
        await deps.timeline.record(orderId, "claimed", { claimId }, runId);
        // Memoised with the step, so later steps need not load the order again.
        return {
          claimed: true as const,
          lines: order.lines.map(({ sku, quantity }) => ({ sku, quantity })),
          paymentIntentId: order.paymentIntentId,
        };
      });
      if (!claim.claimed) {
        if (claim.reason === "not-found") throw new OrderVanishedError(orderId);
        if (claim.reason === "cancel-requested") {
          // Cancelled before this run started, so no cancelOn fired and no cleanup run exists.
          await cancelOrder(context, "cancelled before fulfilment started");
          return { orderId, skipped: "cancelled-before-start" as const };
        }
        return { orderId, skipped: claim.reason };
      }

      const { lines } = claim;
      const reservation = await step.run("reserve-stock", async () => {
        const outcome = await deps.inventory.reserve(orderId, lines);
        await deps.timeline.record(
          orderId,
          outcome.ok ? "stock-reserved" : "out-of-stock",
          { ...outcome },
          runId,
        );
        return outcome;
      });
      if (!reservation.ok) {
        // A business outcome, not an ops failure: the customer gets their money back and an e-mail.
        const settlement = await returnPayment(context, {
          stepId: "void-authorization",
          refundCaptured: true,
        });
        await step.run("send-out-of-stock", () =>
          deps.messages.outOfStock(orderId, reservation.sku, settlement),
        );
        await step.run("mark-out-of-stock", async () => {
          await deps.orders.transition(orderId, ["fulfilling"], "cancelled_out_of_stock");
          await deps.timeline.record(
            orderId,
            "cancelled-out-of-stock",
            { sku: reservation.sku, settlement },
            runId,
          );
        });
        return { orderId, outcome: "cancelled_out_of_stock" as const };
      }

      let paymentId: string;
      try {
        paymentId = await step.run("charge-card", async () => {
          const intentId = event.data.paymentIntentId ?? claim.paymentIntentId;
          if (!intentId) throw new NonRetriableError(`Order ${orderId} has no PaymentIntent to capture`);
          try {
            const captured = await deps.payments.capture(intentId, `capture-${orderId}`);
            const record = await deps.paymentRecords.recordCaptured(
              orderId,
              intentId,
              captured.amountCaptured,
              captured.currency,
            );
            await deps.timeline.record(orderId, "payment-captured", { ...captured }, runId);
            return record.id;
          } catch (error) {
            if (error instanceof PaymentRejectedError) {
              throw new NonRetriableError(`${error.reason}: ${error.message}`, { cause: error });
            }
            throw error;
          }
        });
      } catch (error) {
        if (!(error instanceof StepError)) throw error;
        await releaseStock(context);
        await returnPayment(context, { stepId: "void-authorization", refundCaptured: false });
        await step.run("send-payment-failed", () => deps.messages.paymentFailed(orderId, error.message));
        await step.run("mark-payment-failed", async () => {
          await deps.orders.transition(orderId, ["fulfilling"], "payment_failed");
          await deps.timeline.record(orderId, "payment-failed", { error: error.message }, runId);
        });
        // The customer is told and made whole; failing the run is how ops hear about it.
        throw new NonRetriableError(`Payment for order ${orderId} failed: ${error.message}`, {
          cause: error,
        });
      }

      const shipment = await step.run("create-shipment", async () => {
        const booked = await deps.shipments.book({ orderId, lines });
        if (!booked) {
          // Digital-only: nothing to ship, so the order is delivered once the money is taken.
          await deps.orders.transition(orderId, ["fulfilling"], "delivered");
          await deps.timeline.record(orderId, "nothing-to-ship", {}, runId);
          return null;
        }
        await deps.orders.transition(orderId, ["fulfilling"], "shipped");
        await deps.timeline.record(orderId, "shipment-booked", { ...booked }, runId);
        return booked;
      });

      if (shipment) {
        await step.run("send-confirmation", async () => {
          const sent = await deps.messages.shipped(orderId, shipment);
          await deps.timeline.record(orderId, "confirmation-sent", { ...sent }, runId);
          return sent;
        });
      }

      const delivery = shipment
        ? await step.waitForEvent("wait-for-delivery", {
            event: shipmentDelivered.name,
            timeout: settings.reviewDelay,
            if: "async.data.orderId == event.data.orderId",
          })
        : null;
      if (!shipment) {
        await step.sleep("wait-after-delivery", settings.reviewAfterDelivery);
      } else if (delivery) {
        await step.run("mark-delivered", async () => {
          await deps.orders.transition(orderId, ["shipped"], "delivered");
          await deps.timeline.record(orderId, "delivered", { deliveredAt: delivery.data.deliveredAt }, runId);
        });
        await step.sleep("wait-after-delivery", settings.reviewAfterDelivery);
      }

      await step.run("send-review-request", async () => {
        const sent = await deps.messages.reviewRequest(orderId);
        await deps.orders.transition(orderId, ["shipped", "delivered"], "completed");
        await deps.timeline.record(
          orderId,
          "review-requested",
          { ...sent, afterDelivery: delivery !== null || !shipment },
          runId,
        );
        return sent;
      });

      return { orderId, paymentId, trackingNumber: shipment?.trackingNumber ?? null };
    },
  );
}
