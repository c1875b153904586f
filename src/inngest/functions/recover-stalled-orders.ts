import type { Inngest } from "inngest";
import { stalledAfterMs } from "../../recovery/stalled-orders";
import type { WorkflowDependencies } from "../dependencies";

export const recoverStalledOrdersFunctionId = "recover-stalled-orders";
/**
 * Every 2 hours: an order's event is sent in the webhook's own request (a failed send answers 5xx
 * and Stripe redelivers), so a stalled order is one an accepted event never started: rare. Every
 * 10 minutes it cost 8,640 Inngest executions a month with no orders
 * (docs/decisions/0190-idle-crons-become-events.md).
 */
export const recoverStalledOrdersCron = "50 */2 * * *";
/** At most this many orders per run; the next run takes the rest, oldest first. */
export const maxReEmittedPerRun = 500;

/**
 * Re-drives placed orders that nothing is working on, exactly as POST /api/orders/:id/redrive
 * does: a new re-drive generation, so a new event id and idempotency key that Inngest does not
 * drop (re-sending the intake's own id would be dropped for 24 hours). The claim step still lets
 * only one run fulfil the order. The prepared events are memoised with their step, so a retried
 * send sends the same ids.
 */
export function createRecoverStalledOrders(inngest: Inngest, deps: WorkflowDependencies) {
  const { stalledOrders, redrive } = deps.recovery;

  return inngest.createFunction(
    {
      id: recoverStalledOrdersFunctionId,
      name: "Re-drive stalled orders",
      triggers: [{ cron: recoverStalledOrdersCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step, runId }) => {
      const stalled = await step.run("find-stalled-orders", () =>
        stalledOrders.find(new Date(Date.now() - stalledAfterMs), maxReEmittedPerRun),
      );
      if (stalled.length === 0) return { reEmitted: 0 };

      const events = await step.run("redrive-stalled-orders", async () => {
        const prepared = [];
        for (const orderId of stalled) {
          const event = await redrive.prepare(orderId, "recover-stalled-orders");
          if (event) prepared.push(event);
        }
        return prepared;
      });
      if (events.length === 0) return { reEmitted: 0 };
      await step.sendEvent(
        "re-emit-order-placed",
        events.map(({ id, name, data }) => ({ id, name, data })),
      );
      await step.run("record-re-emitted", () =>
        stalledOrders.recordReEmitted(
          events.map((event) => event.data.orderId),
          runId,
        ),
      );
      return { reEmitted: events.length, orderIds: events.map((event) => event.data.orderId) };
    },
  );
}
