import { returnWorkOf } from "./return-context";
import { createStep, defineUndo } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const chargeExchangeStepId = "charge-exchange-difference";

/** The undo: the difference refunded in full (key `exchange-charge-refund-<returnId>`) unless the exchange shipped. */
export const refundExchangeCharge = defineUndo("refund-exchange-charge", (ctx) =>
  ctx.step.run("refund-exchange-charge", () => {
    const { work, returnId } = returnWorkOf(ctx);
    return work.refundExchangeCharge(returnId, ctx.runId);
  }),
);

/**
 * A dearer exchange's difference, charged off-session once (Stripe key
 * `exchange-charge-<returnId>`) before anything is reserved or shipped; `failed` when the bank
 * refused it, and the run goes no further. Only a charge taken owes the undo.
 */
export const chargeExchange = createStep({
  id: chargeExchangeStepId,
  invoke: (ctx) =>
    ctx.step.run(chargeExchangeStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.chargeExchange(returnId, ctx.runId);
    }),
  undo: refundExchangeCharge,
  owesUndo: (out) => out.outcome === "charged",
});
