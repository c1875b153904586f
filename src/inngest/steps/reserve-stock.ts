import type { WorkflowDependencies } from "../dependencies";
import type { Claim } from "./context";
import { placeWindowHold } from "./hold-fulfilment";
import { releaseStock } from "./release-stock";
import { createStep } from "./saga";

export const reserveStockStepId = "reserve-stock";

/**
 * Takes the order's stock, all lines or none (the checkout's hold, converted, or fresh stock), under
 * the fulfilment guard: nothing is taken once a cancellation was requested or the order was
 * re-driven to another run. With PARTIAL_FULFILMENT=ship_available a line short of stock does not
 * stop the others: what is on hand is taken and the outcome names the `short` lines, recorded on
 * the order lines by the reservation's own statement. Idempotent by the order id (a repeat reports
 * the existing reservation, with the same short lines). Undo: release-stock, once the stock is taken.
 *
 * With FULFILMENT_HOLD, the stock taken, it also puts the order on its `fulfilment_window` hold
 * (one step fewer than a step of its own: docs/decisions/0191-the-hold-window-in-one-wait.md);
 * `windowHold` in the outcome says this step did, which tells a run begun before from one begun
 * after (hold-fulfilment.ts).
 */
/**
 * The reservation itself, as reserve-stock's step ran it; the claim step runs it too, in its own
 * step, right after the claim (decision 0195: one execution fewer). Idempotent by the order id.
 */
export async function reserveFor(
  deps: WorkflowDependencies,
  orderId: string,
  runId: string,
  claim: Pick<Claim, "claimId" | "lines">,
) {
  const guard = { claimId: claim.claimId };
  const record = { runId };
  const { entriesRecorded, ...outcome } =
    deps.settings.partialFulfilment === "ship_available"
      ? await deps.inventory.reserve(orderId, claim.lines, guard, { allowShort: true, record })
      : await deps.inventory.reserve(orderId, claim.lines, guard, { record });
  const windowHold = outcome.ok ? await placeWindowHold(deps, orderId) : false;
  const result = windowHold ? { ...outcome, windowHold: true as const } : outcome;
  // A checkout hold's conversion writes its entries in its own statement (stock-holds.ts).
  if (entriesRecorded) return result;
  if (outcome.ok || outcome.reason === "out_of_stock")
    await deps.timeline.record(
      orderId,
      outcome.ok ? "stock-reserved" : "out-of-stock",
      { ...outcome },
      runId,
    );
  if (outcome.ok && outcome.short)
    await deps.timeline.record(
      orderId,
      "lines-short",
      { short: outcome.short, reserved: outcome.reserved },
      runId,
    );
  return result;
}

export type Reservation = Awaited<ReturnType<typeof reserveFor>>;

/**
 * `claim.reservation`: the claim step reserved already (the outcome is memoised with it), so no
 * step runs. A run whose memoised claim has none (begun before decision 0195) reserves in the
 * `reserve-stock` step, as it always did.
 */
export const reserveStock = createStep({
  id: reserveStockStepId,
  invoke: async ({ step, deps, orderId, runId }, claim: Claim & { reservation?: Reservation }) =>
    claim.reservation ?? step.run(reserveStockStepId, () => reserveFor(deps, orderId, runId, claim)),
  undo: releaseStock,
  owesUndo: (outcome) => outcome.ok,
});
