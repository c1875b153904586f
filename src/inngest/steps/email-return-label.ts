import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const emailReturnLabelStepId = "email-return-label";

/** E-mailed once (key `return-label-<returnId>`); nothing to take back. */
export const emailReturnLabel = createStep({
  id: emailReturnLabelStepId,
  invoke: (ctx) =>
    ctx.step.run(emailReturnLabelStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.emailLabel(returnId, ctx.runId);
    }),
});
