import { NonRetriableError } from "inngest";
import { isAppError } from "../../errors";
import type { ShortLine } from "../../inventory/inventory";
import { disputeWithholds } from "../../orders/disputed-amount";
import type { GuardRefusal } from "../../orders/fulfilment-records";
import { PaymentRejectedError } from "../../payments/payment-gateway";
import type { WorkflowDependencies } from "../dependencies";
import { OrderVanishedError } from "./claim-order";
import type { Claim, StepContext } from "./context";
import { endWindowHold } from "./hold-fulfilment";
import { createStep } from "./saga";

export const chargeCardStepId = "charge-card";

/**
 * The short lines' money (partial fulfilment): not captured, or refunded when it was taken already,
 * or withheld: taken already and charged back, so the cardholder gets it through the dispute.
 */
export interface ShortSettlement {
  settlement: "not-charged" | "refunded" | "withheld";
  /** What the short lines cost: not captured, refunded, or owed once the dispute is decided. */
  amount: number;
  refundId?: string | null;
  /** Withheld: the disputes holding the charge (empty when only Stripe's refusal said so). */
  disputes?: string[];
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
      // Partial fulfilment: only the shipped lines are charged. The order's total is what Stripe
      // charged (its lines, shipping, discount and tax: the recorded breakdown), and the short lines'
      // amount is their share of their lines' totals, tax and discount included (ShortLine.amount);
      // shipping stays charged, as something ships. The same amount on every retry, so the capture
      // key's request never changes. Short
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
          ({ short, amountRefunded } = await refundShortLines(deps, orderId, intentId, excess));
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
          shortLinesKind[short.settlement],
          { ...short, captured: captured.amountCaptured, total, lines: shortLines },
          runId,
        );
        if (short.settlement === "withheld")
          await tellShortRefundWithheld({ deps, orderId, runId }, intentId, short);
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

const shortLinesKind = {
  "not-charged": "short-lines-not-charged",
  refunded: "short-lines-refunded",
  withheld: "short-lines-refund-withheld",
} as const;

/**
 * Taken whole already (automatic capture): the short lines are refunded, once. The look at Stripe
 * first keeps a retry days later (past Stripe's 24 h key memory) from refunding twice; within them
 * the key (`refund-short-<orderId>`) replays the first refund. A charged-back charge is not
 * refunded (src/orders/disputed-amount.ts): the cardholder gets the money through the dispute, a
 * refund on top would pay them twice. Our records say so before Stripe is asked; Stripe's own
 * `charge_disputed` (its dispute's webhook not here yet) says the same. Withheld is an answer, not
 * a failure: the capture is recorded and the order ships what it has.
 */
async function refundShortLines(
  deps: WorkflowDependencies,
  orderId: string,
  intentId: string,
  excess: number,
): Promise<{ short: ShortSettlement; amountRefunded: number }> {
  const intent = await deps.payments.retrieve(intentId);
  if (intent.amountRefunded >= excess) {
    return {
      short: { settlement: "refunded", amount: excess, refundId: null },
      amountRefunded: intent.amountRefunded,
    };
  }
  const withheld = (disputes: string[]) => ({
    short: { settlement: "withheld" as const, amount: excess, refundId: null, disputes },
    amountRefunded: intent.amountRefunded,
  });
  const held = await deps.disputes.holdOf(orderId);
  const refundable = intent.amountCaptured - intent.amountRefunded;
  if (disputeWithholds(held, refundable, excess)) {
    return withheld(held.disputes.map((dispute) => dispute.providerId));
  }
  try {
    const refund = await deps.payments.refundAmount(intentId, excess, `refund-short-${orderId}`);
    return {
      short: { settlement: "refunded", amount: excess, refundId: refund.refundId },
      amountRefunded: intent.amountRefunded + refund.amountRefunded,
    };
  } catch (error) {
    if (isAppError(error) && error.code === "charge_disputed") return withheld([]);
    throw error;
  }
}

/**
 * Ops hear once per dispute (or per payment, when only Stripe's refusal named it) that the short
 * lines' money waits for the dispute: a retried step raises the same key.
 */
async function tellShortRefundWithheld(
  { deps, orderId, runId }: Pick<StepContext, "deps" | "orderId" | "runId">,
  intentId: string,
  short: ShortSettlement,
): Promise<void> {
  const about = short.disputes?.[0] ?? intentId;
  await deps.alerts.notify({
    key: `short-lines-refund-withheld-${about}`,
    title: "Short lines not refunded: the payment is disputed",
    runId,
    fields: {
      orderId,
      paymentIntent: intentId,
      dispute: short.disputes?.join(", ") || "not yet recorded (Stripe refused the refund)",
      owed: short.amount,
      action:
        "The lines that did not ship were paid for and not refunded. If the dispute is won or withdrawn, refund their price from the console; if it is lost or accepted, the cardholder has the money back through it",
    },
  });
}
