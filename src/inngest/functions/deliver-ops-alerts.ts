import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

export const deliverOpsAlertsFunctionId = "deliver-ops-alerts";
/**
 * The safety net only, four times a day: each alert's group is delivered by deliver-alert-group,
 * started by the alert's own event. What is left for this run is an alert whose event did not go
 * and whose process died before its own timer delivered it, or a group a day of Slack outage
 * outlasted.
 */
export const deliverOpsAlertsCron = "11 */6 * * *";

/**
 * Sends the ops alerts Slack has not taken yet, each group when its window and backoff are over.
 * Leases keep this run, deliver-alert-group and an in-process delivery from sending one twice.
 */
export function createDeliverOpsAlerts(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: deliverOpsAlertsFunctionId,
      name: "Deliver ops alerts Slack has not taken yet (safety net)",
      triggers: [{ cron: deliverOpsAlertsCron }],
      concurrency: { limit: 1 },
      // The next run retries anyway.
      retries: 0,
    },
    async ({ step }) => step.run("deliver-ops-alerts", () => deps.alertOutbox.drain()),
  );
}
