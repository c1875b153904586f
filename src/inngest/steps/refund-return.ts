import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const refundReturnStepId = "refund-return";

/** Money back at Stripe, once (refund row and Stripe key by the return's id): no undo. */
export const refundReturn = createStep({
  id: refundReturnStepId,
  invoke: (ctx) =>
    ctx.step.run(refundReturnStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.refund(returnId, ctx.runId);
    }),
});
