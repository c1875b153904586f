import { defineUndo } from "./saga";

export const releaseStockStepId = "release-stock";

/**
 * Undoes reserve-stock, and the hold the checkout took: puts the order's reserved and held stock
 * back, once (a repeat releases nothing).
 */
export const releaseStock = defineUndo(releaseStockStepId, ({ step, deps, orderId, runId }) =>
  step.run(releaseStockStepId, async () => {
    const released = await deps.inventory.release(orderId);
    await deps.timeline.record(orderId, "stock-released", { released }, runId);
    return released;
  }),
);
