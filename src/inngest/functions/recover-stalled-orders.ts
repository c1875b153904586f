import type { GetStepTools, Inngest } from "inngest";
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
 * A handed-back label whose refund no track-label-refund run took up this long after the request
 * lost its event: the run marks it within seconds of the publish.
 */
export const labelRefundUntrackedAfterMs = 15 * 60_000;

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
      await restartLabelRefundTracking(step, deps);
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

/**
 * Labels handed back (a cancel, a full refund, a re-ship) whose refund nothing follows: the
 * crash came between recording the refund and publishing shop/label.refund-requested. Their
 * tracking starts under the event id the lost publish had (one run per order, or per re-shipped
 * label, whoever sends it), and ops hear once per label (keyed by its tracking number) that the
 * sweep had to rescue it. New step ids, before the order sweep's own.
 */
async function restartLabelRefundTracking(
  step: GetStepTools<Inngest>,
  deps: WorkflowDependencies,
): Promise<number> {
  const untracked = await step.run("find-untracked-label-refunds", () =>
    deps.labels.untrackedRefunds(new Date(Date.now() - labelRefundUntrackedAfterMs), maxReEmittedPerRun),
  );
  if (untracked.length === 0) return 0;
  const events = [...new Map(untracked.map(({ event }) => [event.id, event])).values()];
  await step.sendEvent(
    "restart-label-refund-tracking",
    events.map(({ id, name, data }) => ({ id, name, data })),
  );
  await step.run("tell-label-refund-tracking-restarted", async () => {
    for (const label of untracked) {
      await deps.alerts.notify({
        key: `label-refund-untracked-${label.trackingNumber}`,
        title: "Label refund was not being followed: tracking restarted",
        fields: {
          orderId: label.orderId,
          trackingNumber: label.trackingNumber,
          parcelNumber: label.parcelNumber,
          action:
            "Nothing to do unless the refund is later rejected (that alert follows); the refund was handed back but its follow-up was lost in a crash",
        },
      });
    }
  });
  return events.length;
}
