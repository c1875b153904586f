import type { Claim, StepContext } from "./context";

export const reserveStockStepId = "reserve-stock";

/**
 * Takes the order's stock, all lines or none, under the fulfilment guard: nothing is taken once a
 * cancellation was requested or the order was re-driven to another run. Undo: release-stock.
 * Idempotent by the order id (a repeat reports the existing reservation).
 */
export function reserveStock({ step, deps, orderId, runId }: StepContext, claim: Claim) {
  return step.run(reserveStockStepId, async () => {
    const outcome = await deps.inventory.reserve(orderId, claim.lines, { claimId: claim.claimId });
    if (outcome.ok || outcome.reason === "out_of_stock")
      await deps.timeline.record(
        orderId,
        outcome.ok ? "stock-reserved" : "out-of-stock",
        { ...outcome },
        runId,
      );
    return outcome;
  });
}
