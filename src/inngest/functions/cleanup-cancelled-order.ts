import type { Inngest } from "inngest";
import { z } from "zod";
import type { WorkflowDependencies } from "../dependencies";
import { inngestAppId } from "../client";
import { cancelOrder } from "../steps/compensation";
import { fulfillOrderFunctionId } from "./fulfill-order";

const cancelledRunFunctionId = `${inngestAppId}-${fulfillOrderFunctionId}`;

const cancelledRun = z.object({
  function_id: z.string(),
  run_id: z.string(),
  event: z
    .object({ data: z.object({ orderId: z.string() }).partial() })
    .partial()
    .optional(),
});

/**
 * A cancelled run emits inngest/function.cancelled and never inngest/function.failed, so this
 * is the only place that undoes what a cancelled fulfilment did: stock back, money back (void or
 * full refund), order cancelled, customer told. Once a shipment is booked nothing is undone
 * blindly: ops are alerted to stop the parcel first.
 */
export function createCleanupCancelledOrder(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: "cleanup-cancelled-order",
      name: "Clean up after a cancelled fulfilment",
      triggers: [
        { event: "inngest/function.cancelled", if: `event.data.function_id == '${cancelledRunFunctionId}'` },
      ],
      retries: 5,
    },
    async ({ event, step, runId }) => {
      const data = cancelledRun.parse(event.data);
      const cancelledRunId = data.run_id;

      const target = await step.run("find-order", async () => {
        const orderId = data.event?.data?.orderId ?? (await deps.timeline.orderOfRun(cancelledRunId));
        if (!orderId) return null;
        const order = await deps.orders.findForFulfilment(orderId);
        if (!order) return null;
        // A run that lost the claim never touched the order; cleaning up after it would undo the winner's work.
        const owner = await deps.timeline.claimingRunOf(orderId);
        const ownedByCancelledRun = owner === null || owner === cancelledRunId;
        return { orderId, status: order.status, hasShipment: order.hasShipment, ownedByCancelledRun };
      });
      if (!target) return { skipped: "order-not-found", cancelledRunId };
      if (!target.ownedByCancelledRun) return { skipped: "run-did-not-own-order", orderId: target.orderId };
      if (target.status === "cancelled") return { skipped: "already-cancelled", orderId: target.orderId };

      const { orderId } = target;
      if (target.hasShipment) {
        await step.run("alert-shipped-order-cancelled", async () => {
          await deps.orders.flagForOps(orderId, "cancelled after the shipment was booked");
          await deps.timeline.record(orderId, "cancel-needs-ops", { cancelledRunId }, runId);
          await deps.alerts.notify({
            title: "Order cancelled after its shipment was booked",
            runId: cancelledRunId,
            fields: { orderId, action: "Stop the parcel with the carrier, then refund by hand" },
          });
        });
        return { orderId, outcome: "needs-ops" as const };
      }

      const settlement = await cancelOrder({ step, deps, orderId, runId }, "cancelled by request");
      return { orderId, outcome: "cancelled" as const, settlement };
    },
  );
}
