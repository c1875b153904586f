import type { PaymentSettlement } from "../../notifications/customer-messages";
import { defineUndo } from "./saga";

export const returnPaymentStepId = "return-payment";

/**
 * Undoes what the customer's payment holds, settling from the PaymentIntent as Stripe reports it
 * now, never from our record alone (a capture may have landed while a cancel ran, or been taken
 * while recording it failed): an authorization is voided, captured money refunded in full
 * (what is left of it), a voided one recorded as such. Keys `void-`/`refund-<orderId>` make a
 * repeat, or the same undo run by the cleanup and by a late step at once, one Stripe change.
 * Owed from the claim on: the authorization taken at checkout is the run's to give back.
 */
export const returnPayment = defineUndo(returnPaymentStepId, ({ step, deps, orderId, runId }) =>
  step.run(returnPaymentStepId, async (): Promise<PaymentSettlement> => {
    const order = await deps.orders.findForFulfilment(orderId);
    const intentId = order?.paymentIntentId;
    if (!order || !intentId) {
      await deps.timeline.record(orderId, "payment-not-returned", { reason: "no payment intent" }, runId);
      return "none";
    }
    const intent = await deps.payments.retrieve(intentId);
    if (intent.state === "requires_capture") {
      const voided = await deps.payments.voidAuthorization(intentId, `void-${orderId}`);
      if (voided.outcome === "not-voidable") {
        // Captured between our look and the void: the retry settles from the new state (a refund).
        throw new Error(`PaymentIntent ${intentId} became ${voided.state} while voiding it`);
      }
      await deps.paymentRecords.recordVoided(orderId, intentId, order.currency);
      await deps.timeline.record(orderId, "authorization-voided", { outcome: voided.outcome }, runId);
      return "voided";
    }
    if (intent.state === "canceled") {
      await deps.paymentRecords.recordVoided(orderId, intentId, order.currency);
      await deps.timeline.record(orderId, "authorization-voided", { outcome: "already-voided" }, runId);
      return "voided";
    }
    if (intent.state === "succeeded") {
      let refunded = intent.amountRefunded;
      let refundId: string | null = null;
      if (refunded < intent.amountCaptured) {
        const refund = await deps.payments.refundInFull(intentId, `refund-${orderId}`);
        // A refund without an amount returns all that is left when Stripe makes it, so an ops
        // refund that landed after our look is counted by Stripe, never refunded twice: the whole
        // capture is back now, whatever `intent` read (a stale sum would record too little).
        refunded = intent.amountCaptured;
        refundId = refund.refundId;
      }
      await deps.paymentRecords.recordRefund(orderId, intentId, order.currency, {
        captured: intent.amountCaptured,
        refunded: Math.min(refunded, intent.amountCaptured),
      });
      await deps.timeline.record(orderId, "payment-refunded", { refundId, amount: refunded }, runId);
      return "refunded";
    }
    await deps.timeline.record(orderId, "payment-not-returned", { state: intent.state }, runId);
    return "none";
  }),
);
