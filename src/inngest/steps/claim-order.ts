import { NonRetriableError } from "inngest";
import type { ClaimOutcome } from "../../orders/order-repository";
import type { Claim } from "./context";
import { reserveFor, type Reservation } from "./reserve-stock";
import { returnPayment } from "./return-payment";
import { createStep } from "./saga";

/** A step runs begun before the claim id came from the run id drew it in (never rename). */
export const claimIdStepId = "claim-id";

/** This run's claim id: Inngest's run id is unique per run and the same on every retry and replay. */
export const claimIdOf = (runId: string): string => `run-${runId}`;
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
 * Gives the order to this run, once: the claim id, derived from the run id (so no step of its own
 * draws it: docs/decisions/0191-the-hold-window-in-one-wait.md), taken by one conditional UPDATE.
 * Later guarded writes name it, so a run the order was re-driven away from changes nothing more.
 * Idempotent by the claim id. Undo: return-payment, from here on (the authorization the checkout
 * took is now this run's to give back). A claimed order's stock is reserved in this same step
 * (reserve-stock.ts `reserveFor`, memoised as `reservation`), which reserve-stock then returns.
 *
 * A run begun before drew a random id in `claim-id`. Its memoised `claim` outcome carries that id,
 * which later steps use; a run whose claim landed but whose step result did not (the process died
 * between) finds the order claimed under it: the run's own `claimed` entry names it, and the claim
 * is retried with it, finding its own claim in place.
 */
export const claimOrder = createStep({
  id: claimOrderStepId,
  invoke: async ({ step, deps, orderId, runId }) =>
    step.run(
      claimOrderStepId,
      async (): Promise<({ claimed: true } & Claim & { reservation?: Reservation }) | Lost> => {
        let claimId = claimIdOf(runId);
        let outcome = await deps.orders.claim(orderId, claimId, { runId });
        if (!outcome.claimed && outcome.reason === "claimed-by-another-run") {
          const earlier = (await deps.timeline.list(orderId))
            .filter((entry) => entry.kind === "claimed" && entry.runId === runId)
            .map((entry) => (entry.detail as { claimId?: unknown }).claimId)
            .find((id): id is string => typeof id === "string" && id !== claimId);
          if (earlier !== undefined) {
            claimId = earlier;
            outcome = await deps.orders.claim(orderId, claimId, { runId });
          }
        }
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
        const claimed = {
          claimed: true as const,
          claimId,
          lines: order.lines.map(({ sku, quantity }) => ({ sku, quantity })),
          paymentIntentId: order.paymentIntentId,
        };
        if (outcome.booked) return { ...claimed, booked: true };
        // The stock, in this same step (decision 0195: one execution fewer): a retry finds its own
        // claim above and the reservation by the order id, so it takes nothing twice.
        return { ...claimed, reservation: await reserveFor(deps, orderId, runId, claimed) };
      },
    ),
  undo: returnPayment,
  owesUndo: (claim) => claim.claimed,
});
