import type { StepContext } from "./context";

export const releaseStockStepId = "release-stock";

/** Undoes reserve-stock: puts the order's reserved stock back, once (a repeat releases nothing). */
export function releaseStock({ step, deps, orderId, runId }: StepContext) {
  return step.run(releaseStockStepId, async () => {
    const released = await deps.inventory.release(orderId);
    await deps.timeline.record(orderId, "stock-released", { released }, runId);
    return released;
  });
}
