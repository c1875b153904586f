import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

export const drainEmailOutboxFunctionId = "drain-email-outbox";
export const drainEmailOutboxCron = "* * * * *";
/** E-mails tried per run; the next run takes the rest, longest waiting first. */
export const maxEmailsPerDrain = 50;

/**
 * Sends the e-mails the mail server did not take when the workflow asked (an SMTP outage), each
 * when its backoff is due, and gives up (alerting ops) after EMAIL_RETRY_FOR. Every e-mail is
 * idempotent by its key (`shipped-<orderId>`, ...) and leased while sent, so a run that overlaps
 * a workflow's own attempt, or a retried run, sends nothing twice.
 */
export function createDrainEmailOutbox(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: drainEmailOutboxFunctionId,
      name: "Send e-mails an SMTP outage held back",
      triggers: [{ cron: drainEmailOutboxCron }],
      concurrency: { limit: 1 },
      // The next minute's run retries anyway.
      retries: 0,
    },
    async ({ step }) =>
      step.run("drain-email-outbox", () => deps.emailOutbox.drain({ limit: maxEmailsPerDrain })),
  );
}
