import type { Inngest } from "inngest";
import { opsAlertQueued } from "../../events/contracts";
import { durationMs } from "../../shared/duration";
import type { WorkflowDependencies } from "../dependencies";

export const deliverAlertGroupFunctionId = "deliver-alert-group";
/** Rounds one run retries a Slack outage (15 minutes apart at most: about a day); then the cron. */
export const maxAlertRounds = 100;

/**
 * Delivers one group of ops alerts (a function's failures, one title of notice) as one Slack
 * message once ALERT_GROUP_WINDOW has passed since its first alert: Inngest's debounce, keyed by
 * the group, with the window as both period and timeout, is that grouping (a storm is one run and
 * one message; a lone alert waits the window alone). A failed message is retried after the
 * outbox's backoff, sleeping durably in between; alerts are never given up. "Once" is the outbox's
 * lease: a run that overlaps the safety-net cron or this process's own timer sends nothing twice.
 * This was the every-minute cron deliver-ops-alerts, which is now the slow safety net.
 */
export function createDeliverAlertGroup(inngest: Inngest, deps: WorkflowDependencies) {
  // Inngest's debounce takes 1 s at least; with a window of 0 the outbox delivers at once itself.
  const window: `${number}s` = `${Math.max(1, Math.ceil(durationMs(deps.settings.alertGroupWindow ?? "2m") / 1000))}s`;
  return inngest.createFunction(
    {
      id: deliverAlertGroupFunctionId,
      name: "Deliver a group of ops alerts to Slack",
      triggers: [opsAlertQueued],
      debounce: { key: "event.data.group", period: window, timeout: window },
      retries: 3,
    },
    async ({ event, step }) => {
      const { group } = event.data;
      let delivered = 0;
      for (let round = 0; round < maxAlertRounds; round++) {
        const outcome = await step.run("deliver-alert-group", () => deps.alertOutbox.deliverGroup(group));
        delivered += outcome.delivered;
        if (outcome.retryInMs === null) return { group, delivered };
        // Measured on the outbox's clock, where the backoff is.
        await step.sleep("wait-for-slack", outcome.retryInMs);
      }
      return { group, delivered, left: "to the safety-net cron" };
    },
  );
}
