import { returnWorkOf } from "./return-context";
import { createStep, defineUndo } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const createReturnLabelStepId = "create-return-label";

/** The undo of the label: handed back to the carrier unless a scan shows it used. */
export const refundReturnLabel = defineUndo("refund-return-label", (ctx) =>
  ctx.step.run("refund-return-label", () => {
    const { work, returnId } = returnWorkOf(ctx);
    return work.handBackLabel(returnId, ctx.runId);
  }),
);

export const createReturnLabel = createStep({
  id: createReturnLabelStepId,
  invoke: (ctx) =>
    ctx.step.run(createReturnLabelStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.buyLabel(returnId, ctx.runId);
    }),
  undo: refundReturnLabel,
});
