import type { PaymentSettlement } from "../../notifications/customer-messages";
import type { StepContext } from "./context";
import { finishUnfulfilled, type Unfulfilled } from "./finish-unfulfilled";
import { returnPayment } from "./return-payment";
import { runUndos, type Undo } from "./saga";

export const checkClaimStepId = "check-claim";

/**
 * The one failure path of fulfil-order and of the cancel cleanup: run the undos owed (newest
 * first: a Saga's `owed`, or every undo of the fulfilment), then end the order with the outcome
 * `decide` picks from what the money settlement turned out to be (a "failed" payment that Stripe
 * reports captured was refunded, and the customer is told that, not "payment failed"). With
 * `claimId`, a run that a re-drive gave the order away from undoes nothing: the new run owns the
 * order and its side effects.
 */
export async function compensate(
  ctx: StepContext,
  undos: readonly Undo<unknown>[],
  decide: (settlement: PaymentSettlement) => Unfulfilled,
  options: {
    claimId?: string;
    /** The label of a shipped order was handed back: the order may end from `shipped` too. */
    labelVoided?: boolean;
  } = {},
) {
  const { claimId } = options;
  if (claimId !== undefined) {
    const owner = await ctx.step.run(checkClaimStepId, async () => {
      const order = await ctx.deps.orders.findForFulfilment(ctx.orderId);
      return order?.claimId === claimId;
    });
    if (!owner) return { outcome: null, settlement: "none" as const };
  }
  const results = await runUndos(ctx, undos);
  const settlement = results.of(returnPayment) ?? "none";
  const outcome = await finishUnfulfilled(ctx, decide(settlement), settlement, {
    fromShipped: options.labelVoided ?? false,
  });
  return { outcome, settlement };
}
