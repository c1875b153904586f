import type { Claim } from "./context";
import { releaseStock } from "./release-stock";
import { createStep } from "./saga";

export const reserveStockStepId = "reserve-stock";

/**
 * Takes the order's stock, all lines or none (the checkout's hold, converted, or fresh stock), under
 * the fulfilment guard: nothing is taken once a cancellation was requested or the order was
 * re-driven to another run. Idempotent by the order id (a repeat reports the existing
 * reservation). Undo: release-stock, once the stock is taken.
 */
export const reserveStock = createStep({
  id: reserveStockStepId,
  invoke: ({ step, deps, orderId, runId }, claim: Claim) =>
    step.run(reserveStockStepId, async () => {
      const outcome = await deps.inventory.reserve(orderId, claim.lines, { claimId: claim.claimId });
      if (outcome.ok || outcome.reason === "out_of_stock")
        await deps.timeline.record(
          orderId,
          outcome.ok ? "stock-reserved" : "out-of-stock",
          { ...outcome },
          runId,
        );
      return outcome;
    }),
  undo: releaseStock,
  owesUndo: (outcome) => outcome.ok,
});
