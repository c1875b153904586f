import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const closeReturnStepId = "close-return";

export const closeReturn = createStep({
  id: closeReturnStepId,
  invoke: (ctx) =>
    ctx.step.run(closeReturnStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.close(returnId, ctx.runId);
    }),
});
