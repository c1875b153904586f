import { returnWorkOf } from "./return-context";
import { createStep, defineUndo } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const reserveExchangeStepId = "reserve-exchange";

/** The undo: the exchange's items back on the shelf (`released`), unless they shipped. */
export const releaseExchange = defineUndo("release-exchange", (ctx) =>
  ctx.step.run("release-exchange", () => {
    const { work, returnId } = returnWorkOf(ctx);
    return work.releaseExchange(returnId, ctx.runId);
  }),
);

/** The exchange's new items taken from stock (`reserved` movements), once per return. */
export const reserveExchange = createStep({
  id: reserveExchangeStepId,
  invoke: (ctx) =>
    ctx.step.run(reserveExchangeStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.reserveExchange(returnId, ctx.runId);
    }),
  undo: releaseExchange,
});
