import type { Inngest } from "inngest";
import { returnRequestedEvent } from "../../events/contracts";
import { returnStalledAfterMs, tellReturnRescued } from "../../returns/stalled-returns";
import type { WorkflowDependencies } from "../dependencies";

export const recoverStalledReturnsFunctionId = "recover-stalled-returns";
/**
 * The sweep's period: a return whose event was lost gets its run within this, after the grace.
 * Every 2 hours, as recover-stalled-orders: a lost event is a crash between the record and the
 * publish, rare; every 5 minutes this cron alone cost 17,280 Inngest executions a month with no
 * returns (docs/decisions/0190-idle-crons-become-events.md).
 */
export const recoverStalledReturnsCron = "40 */2 * * *";
/** At most this many returns of each kind per run; the next run takes the rest, oldest first. */
export const maxReturnsPerRun = 200;

/**
 * Starts the run of every return whose shop/return.requested was lost (recorded, then a crash
 * before the publish), and sends again the decision events a waiting run may not have heard
 * (src/returns/stalled-returns.ts). Every event keeps its own id, so an event the engine already
 * took is dropped and process-return's idempotency on the return id keeps one run per return:
 * no second label. Ops are told once per rescued return (the alert's key).
 */
export function createRecoverStalledReturns(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: recoverStalledReturnsFunctionId,
      name: "Recover returns whose event was lost",
      triggers: [{ cron: recoverStalledReturnsCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step, runId }) => {
      const stalled = deps.returns?.stalled;
      if (!stalled) return { started: 0, reAnnounced: 0 };
      const found = await step.run("find-stalled-returns", async () => {
        const olderThan = new Date(Date.now() - returnStalledAfterMs);
        return {
          unstarted: await stalled.findUnstarted(olderThan, maxReturnsPerRun),
          unheard: await stalled.findUnheard(olderThan, maxReturnsPerRun),
        };
      });
      const events = [
        ...found.unstarted.map((row) =>
          returnRequestedEvent({ returnId: row.returnId, orderId: row.orderId }),
        ),
        ...found.unheard.map((row) => row.event),
      ];
      if (events.length === 0) return { started: 0, reAnnounced: 0 };
      await step.sendEvent(
        "send-stalled-return-events",
        events.map(({ id, name, data }) => ({ id, name, data })),
      );
      if (found.unstarted.length > 0)
        await step.run("tell-returns-recovered", async () => {
          for (const row of found.unstarted) await tellReturnRescued(deps, row, runId);
        });
      return {
        started: found.unstarted.length,
        returnIds: found.unstarted.map((row) => row.returnId),
        reAnnounced: found.unheard.length,
      };
    },
  );
}
