import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const emailExchangeStepId = "email-exchange-tracking";

/** The exchange's tracking e-mailed once (key `exchange-shipped-<returnId>`). */
export const emailExchange = createStep({
  id: emailExchangeStepId,
  invoke: (ctx) =>
    ctx.step.run(emailExchangeStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.emailExchange(returnId, ctx.runId);
    }),
});
