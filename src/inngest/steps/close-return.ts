import type { WorkContext } from "../../returns/return-work";
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

/** Closed from `received` by one conditional write; the timeline entry only for the write that landed. */
export async function closeReturnWork(returns: WorkContext, returnId: string, runId: string) {
  const { records, timeline, load } = returns;
  const row = await load(returnId);
  const closed = await records.transition(returnId, ["received"], "closed");
  if (closed) await timeline.record(row.order_id, "return-closed", { returnId, by: "process-return" }, runId);
  return { status: (closed ?? row).status };
}
