import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const writeOffReturnStepId = "write-off-return";

/** Damaged goods: nothing back on the shelf, recorded once. */
export const writeOffReturn = createStep({
  id: writeOffReturnStepId,
  invoke: (ctx) =>
    ctx.step.run(writeOffReturnStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.writeOff(returnId, ctx.runId);
    }),
});
