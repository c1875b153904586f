import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const shipExchangeStepId = "ship-exchange";

/** The new items' label, once (reference `exchange-<returnId>`): the point of no return, no undo. */
export const shipExchange = createStep({
  id: shipExchangeStepId,
  invoke: (ctx) =>
    ctx.step.run(shipExchangeStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.shipExchange(returnId, ctx.runId);
    }),
});
