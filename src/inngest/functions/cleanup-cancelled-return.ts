import type { Inngest } from "inngest";
import { functionCancelled } from "../../events/contracts";
import type { WorkflowDependencies } from "../dependencies";
import { inngestAppId } from "../client";
import { runUndos } from "../steps/saga";
import { processReturnFunctionId, returnUndos } from "./process-return";

const cancelledRunFunctionId = `${inngestAppId}-${processReturnFunctionId}`;

/**
 * A process-return run cancelled by ops (a reject or a close: shop/return.cancelled) stops where
 * it is, and Inngest does not run its undos: this does, every undo a return can owe (the return
 * label handed back while no scan shows it used), each a no-op where there is nothing to undo.
 * The return's own status was set by the use case that cancelled it.
 */
export function createCleanupCancelledReturn(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: "cleanup-cancelled-return",
      name: "Clean up after a cancelled return",
      triggers: [
        { event: functionCancelled.name, if: `event.data.function_id == '${cancelledRunFunctionId}'` },
      ],
      retries: 5,
    },
    async ({ event, step, runId }) => {
      const data = functionCancelled.schema.parse(event.data);
      const returnId = data.event?.data?.returnId;
      const orderId = data.event?.data?.orderId;
      if (!returnId || !orderId) return { skipped: "return-not-named", cancelledRunId: data.run_id };
      const results = await runUndos({ step, deps, orderId, runId, returnId }, returnUndos);
      return { returnId, undone: returnUndos.map((undo) => ({ id: undo.id, result: results.of(undo) })) };
    },
  );
}
