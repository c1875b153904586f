import { NonRetriableError } from "inngest";
import type { ShortLine } from "../../inventory/inventory";
import type { GuardRefusal } from "../../orders/fulfilment-records";
import { PaymentRejectedError } from "../../payments/payment-gateway";
import { OrderVanishedError } from "./claim-order";
import type { Claim } from "./context";
import { endWindowHold } from "./hold-fulfilment";
import { createStep } from "./saga";

export const chargeCardStepId = "charge-card";

/** The short lines' money (partial fulfilment): not captured, or refunded when it was taken already. */
export interface ShortSettlement {
  settlement: "not-charged" | "refunded";
  /** What the short lines cost: not captured, or refunded. */
  amount: number;
  refundId?: string | null;
}

export type ChargeOutcome =
  { charged: true; paymentId: string; short?: ShortSettlement } | { charged: false; stopped: GuardRefusal };

/**
 * Captures the authorized payment (key `capture-<orderId>`), then records it under the fulfilment
 * guard. A capture whose answer arrives after the order was cancelled is not recorded as a
 * capture: the step refunds it itself (key `refund-<orderId>`, the cleanup's key, so the two make
 * one refund whichever runs first) and says so on the timeline. With short lines (partial
 * fulfilment) it captures the total less their price (Stripe's partial capture releases the rest
 * of the hold), or, when the money was taken whole already, refunds their price once (key
 * `refund-short-<orderId>`). No undo of its own: return-payment, owed since the claim, settles
 * from Stripe's state and so also covers a capture, recorded or not, partial or whole.
 */
export const chargeCard = createStep({
  id: chargeCardStepId,
  invoke: (
    { step, deps, orderId, runId },
    claim: Claim,
    eventIntentId: string | null,
    shortLines: readonly ShortLine[] = [],
  ) =>
    step.run(chargeCardStepId, async (): Promise<ChargeOutcome> => {
      const intentId = eventIntentId ?? claim.paymentIntentId;
      if (!intentId) throw new NonRetriableError(`Order ${orderId} has no PaymentIntent to capture`);
      // FULFILMENT_HOLD's window is over (the wait before this step): its hold ends before the
      // money is taken, as its own step `end-fulfilment-hold` did (hold-fulfilment.ts).
      await endWindowHold(deps, orderId);
      // Partial fulfilment: only the shipped lines are charged. The order's total is the sum of its
      // line totals (no tax or shipping lines), so what is not charged is exactly the short lines'
      // price; the same amount on every retry, so the capture key's request never changes. Short
      // lines that cost nothing still make a partial capture (of the whole), so the customer is
      // told of them with the money's answer.
      let total: number | undefined;
      let toCapture: number | undefined;
      const shortAmount = shortLines.reduce((sum, line) => sum + line.amount, 0);
      if (shortLines.length > 0) {
        const order = await deps.orders.findForFulfilment(orderId);
        if (!order) throw new OrderVanishedError(orderId);
        total = order.total;
        toCapture = total - shortAmount;
        if (toCapture <= 0)
          throw new NonRetriableError(`Order ${orderId} has nothing left to charge (${toCapture})`);
      }
      let captured;
      try {
        captured = await deps.payments.capture(intentId, `capture-${orderId}`, toCapture);
      } catch (error) {
        if (error instanceof PaymentRejectedError) {
          throw new NonRetriableError(`${error.reason}: ${error.message}`, { cause: error });
        }
        throw error;
      }
      let short: ShortSettlement | undefined;
      let amountRefunded: number | undefined;
      if (toCapture !== undefined) {
        const excess = captured.amountCaptured - toCapture;
        if (excess > 0) {
          // Taken whole already (automatic capture): the short lines are refunded, once. The look
          // at Stripe first keeps a retry days later (past Stripe's 24 h key memory) from
          // refunding twice; within them the key replays the first refund.
          const intent = await deps.payments.retrieve(intentId);
          const refund =
            intent.amountRefunded < excess
              ? await deps.payments.refundAmount(intentId, excess, `refund-short-${orderId}`)
              : null;
          amountRefunded = intent.amountRefunded + (refund?.amountRefunded ?? 0);
          short = { settlement: "refunded", amount: excess, refundId: refund?.refundId ?? null };
        } else {
          short = { settlement: "not-charged", amount: shortAmount };
        }
      }
      const recorded = await deps.fulfilment.recordCapture({
        orderId,
        claimId: claim.claimId,
        runId,
        ...captured,
        amountAuthorized: total, // undefined unless lines are short: the capture is then the authorized sum
        amountRefunded,
      });
      if (recorded.landed) {
        if (!short) return { charged: true, paymentId: recorded.value.paymentId };
        await deps.timeline.record(
          orderId,
          short.settlement === "refunded" ? "short-lines-refunded" : "short-lines-not-charged",
          { ...short, captured: captured.amountCaptured, total, lines: shortLines },
          runId,
        );
        return { charged: true, paymentId: recorded.value.paymentId, short };
      }
      if (recorded.reason === "cancelled") {
        // Refunded at Stripe already (the refund that stopped the order, say): Stripe refuses a
        // second refund of a charge refunded in full, and there is nothing left to give back.
        const intent = await deps.payments.retrieve(intentId);
        const left = intent.amountCaptured - intent.amountRefunded;
        const refund = left > 0 ? await deps.payments.refundInFull(intentId, `refund-${orderId}`) : null;
        await deps.paymentRecords.recordRefund(orderId, intentId, captured.currency, {
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
