import { randomUUID } from "node:crypto";
import { NonRetriableError } from "inngest";
import type { ClaimOutcome } from "../../orders/order-repository";
import type { Claim } from "./context";
import { returnPayment } from "./return-payment";
import { createStep } from "./saga";

export const claimIdStepId = "claim-id";
export const claimOrderStepId = "claim";

export class OrderVanishedError extends NonRetriableError {
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

type Lost = Extract<ClaimOutcome, { claimed: false }>;

/**
 * Gives the order to this run, once: a random claim id (memoised, so a retry keeps it) taken by
 * one conditional UPDATE. Later guarded writes name it, so a run the order was re-driven away
 * from changes nothing more. Idempotent by the claim id. Undo: return-payment, from here on (the
 * authorization the checkout took is now this run's to give back).
 */
export const claimOrder = createStep({
  id: claimOrderStepId,
  invoke: async ({ step, deps, orderId, runId }) => {
    const claimId = await step.run(claimIdStepId, () => randomUUID());
    return step.run(claimOrderStepId, async (): Promise<({ claimed: true } & Claim) | Lost> => {
      const outcome = await deps.orders.claim(orderId, claimId, { runId });
      if (!outcome.claimed && outcome.reason === "not-paid-yet") {
        // The event can overtake the commit that records the payment; retrying lets it land.
        throw new OrderNotPaidYetError(orderId);
      }
      if (!outcome.claimed) {
        if (outcome.reason !== "not-found")
          await deps.timeline.record(orderId, "claim-lost", { reason: outcome.reason }, runId);
        return outcome;
      }
      // A first claim came back with the order and wrote its `claimed` entry in the same
      // statement; a retry that found its own claim reads the order and records (once) here.
      const order = outcome.order ?? (await deps.orders.findForFulfilment(orderId));
      if (!order) throw new OrderVanishedError(orderId);
      if (!outcome.order) await deps.timeline.record(orderId, "claimed", { claimId }, runId);
      // Memoised with the step, so later steps need not load the order again.
      return {
        claimed: true,
        claimId,
        lines: order.lines.map(({ sku, quantity }) => ({ sku, quantity })),
        paymentIntentId: order.paymentIntentId,
        ...(outcome.booked ? { booked: true } : {}),
      };
    });
  },
  undo: returnPayment,
  owesUndo: (claim) => claim.claimed,
});
