import type { WorkContext } from "../../returns/return-work";
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

/** Written off once (`written_off_at`); the timeline entry only for the write that landed. */
export async function writeOffReturnWork(returns: WorkContext, returnId: string, runId: string) {
  const { records, timeline, load } = returns;
  const row = await load(returnId);
  const written = await records.writeOff(returnId);
  if (written) {
    await timeline.record(row.order_id, "return-written-off", { returnId, lines: row.lines }, runId);
  }
  return { writtenOff: written };
}
