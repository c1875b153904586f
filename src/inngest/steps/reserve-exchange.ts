import type { WorkContext } from "../../returns/return-work";
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

/** Reserved once (`exchange_reserved_at`), with its movements, in one statement. */
export async function reserveExchangeWork(returns: WorkContext, returnId: string, runId: string) {
  const { records } = returns;
  return { movements: await records.reserveExchange(returnId, runId) };
}

/** The undo of the reservation: the new items back on the shelf unless they shipped. */
export async function releaseExchangeWork(returns: WorkContext, returnId: string, runId: string) {
  const { records } = returns;
  return { movements: await records.releaseExchange(returnId, runId) };
}
