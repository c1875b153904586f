import type { WorkContext } from "../../returns/return-work";
import { returnWorkOf } from "./return-context";
import { createStep } from "./saga";

// A process-return step (src/inngest/functions/process-return.ts); its id is durable Inngest state.
export const restockReturnStepId = "restock-return";

/** Back on the shelf as `returned` movements, once per return. */
export const restockReturn = createStep({
  id: restockReturnStepId,
  invoke: (ctx) =>
    ctx.step.run(restockReturnStepId, () => {
      const { work, returnId } = returnWorkOf(ctx);
      return work.restock(returnId, ctx.runId);
    }),
});

/** The restock's statement moves the stock only while the return is not restocked (`restocked_at`). */
export async function restockReturnWork(returns: WorkContext, returnId: string, runId: string) {
  const { records } = returns;
  const movements = await records.restock(returnId, runId);
  return { movements };
}
