import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

export const deliverOpsAlertsFunctionId = "deliver-ops-alerts";
export const deliverOpsAlertsCron = "* * * * *";

/**
 * Sends the ops alerts Slack has not taken yet: those whose grouping window closed while no
 * process was there to send them (a restart), and those a Slack outage held back, each group when
 * its backoff is due. Leases keep this run and an in-process delivery from sending one twice.
 */
export function createDeliverOpsAlerts(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: deliverOpsAlertsFunctionId,
      name: "Deliver ops alerts Slack has not taken yet",
      triggers: [{ cron: deliverOpsAlertsCron }],
      concurrency: { limit: 1 },
      // The next minute's run retries anyway.
      retries: 0,
    },
    async ({ step }) => step.run("deliver-ops-alerts", () => deps.alertOutbox.drain()),
  );
}
