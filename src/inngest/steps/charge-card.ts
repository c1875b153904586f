import { NonRetriableError } from "inngest";
import type { GuardRefusal } from "../../orders/fulfilment-records";
import { PaymentRejectedError } from "../../payments/payment-gateway";
import type { Claim } from "./context";
import { createStep } from "./saga";

export const chargeCardStepId = "charge-card";

export type ChargeOutcome = { charged: true; paymentId: string } | { charged: false; stopped: GuardRefusal };

/**
 * Captures the authorized payment (key `capture-<orderId>`), then records it under the fulfilment
 * guard. A capture whose answer arrives after the order was cancelled is not recorded as a
 * capture: the step refunds it itself (key `refund-<orderId>`, the cleanup's key, so the two make
 * one refund whichever runs first) and says so on the timeline. No undo of its own: return-payment,
 * owed since the claim, settles from Stripe's state and so also covers a capture, recorded or not.
 */
export const chargeCard = createStep({
  id: chargeCardStepId,
  invoke: ({ step, deps, orderId, runId }, claim: Claim, eventIntentId: string | null) =>
    step.run(chargeCardStepId, async (): Promise<ChargeOutcome> => {
      const intentId = eventIntentId ?? claim.paymentIntentId;
      if (!intentId) throw new NonRetriableError(`Order ${orderId} has no PaymentIntent to capture`);
      let captured;
      try {
        captured = await deps.payments.capture(intentId, `capture-${orderId}`);
      } catch (error) {
        if (error instanceof PaymentRejectedError) {
          throw new NonRetriableError(`${error.reason}: ${error.message}`, { cause: error });
        }
        throw error;
      }
      const recorded = await deps.fulfilment.recordCapture({
        orderId,
        claimId: claim.claimId,
        runId,
        ...captured,
      });
      if (recorded.landed) return { charged: true, paymentId: recorded.value.paymentId };
      if (recorded.reason === "cancelled") {
        const order = await deps.orders.findForFulfilment(orderId);
        // Refunded at Stripe already (the refund that stopped the order, say): Stripe refuses a
        // second refund of a charge refunded in full, and there is nothing left to give back.
        const intent = await deps.payments.retrieve(intentId);
        const left = intent.amountCaptured - intent.amountRefunded;
        const refund = left > 0 ? await deps.payments.refundInFull(intentId, `refund-${orderId}`) : null;
        await deps.paymentRecords.recordRefund(orderId, intentId, order?.currency ?? captured.currency, {
          captured: captured.amountCaptured,
          refunded: Math.min(intent.amountRefunded + (refund?.amountRefunded ?? 0), captured.amountCaptured),
        });
        await deps.timeline.record(
          orderId,
          "payment-captured-after-cancel",
          { amountCaptured: captured.amountCaptured, refundId: refund?.refundId ?? null },
          runId,
        );
      }
      return { charged: false, stopped: recorded.reason };
    }),
});
