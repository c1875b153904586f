import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";
import { orderPlaced, orderPlacedEventId } from "../events";

export const recoverStalledOrdersFunctionId = "recover-stalled-orders";
export const recoverStalledOrdersCron = "*/10 * * * *";
/** A placed order whose row and timeline have not moved for this long is presumed stuck. */
export const stalledAfterMs = 15 * 60_000;
/** At most this many orders per run; the next run takes the rest, oldest first. */
export const maxReEmittedPerRun = 500;

/**
 * Gives a placed order that nothing is working on its shop/order.placed again, with the intake's
 * own event id and payload. Sending it twice is safe: Inngest drops a repeat id within 24 hours,
 * and after that the claim step lets only one run fulfil the order.
 */
export function createRecoverStalledOrders(inngest: Inngest, deps: WorkflowDependencies) {
  const { stalledOrders } = deps.recovery;

  return inngest.createFunction(
    {
      id: recoverStalledOrdersFunctionId,
      name: "Re-emit shop/order.placed for stalled orders",
      triggers: [{ cron: recoverStalledOrdersCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step, runId }) => {
      const stalled = await step.run("find-stalled-orders", () =>
        stalledOrders.find(new Date(Date.now() - stalledAfterMs), maxReEmittedPerRun),
      );
      if (stalled.length === 0) return { reEmitted: 0 };

      await step.sendEvent(
        "re-emit-order-placed",
        stalled.map((data) => ({ name: orderPlaced.name, id: orderPlacedEventId(data.orderId), data })),
      );
      await step.run("record-re-emitted", () =>
        stalledOrders.recordReEmitted(
          stalled.map((order) => order.orderId),
          runId,
        ),
      );
      return { reEmitted: stalled.length, orderIds: stalled.map((order) => order.orderId) };
    },
  );
}
