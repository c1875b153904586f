import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

export const drainEmailOutboxFunctionId = "drain-email-outbox";
/**
 * The safety net only, four times a day: e-mails the mail server refused are sent by
 * send-held-back-emails, started by their own event. What is left for this run is an e-mail whose
 * event did not go (Inngest unreachable at that moment) or whose sender died holding its lease.
 */
export const drainEmailOutboxCron = "7 */6 * * *";
/** E-mails tried per run; the next run takes the rest, longest waiting first. */
export const maxEmailsPerDrain = 50;

/**
 * Sends every e-mail of the outbox that is due, whoever left it there, and gives up (alerting ops)
 * after EMAIL_RETRY_FOR. Every e-mail is idempotent by its key (`shipped-<orderId>`, ...) and
 * leased while sent, so a run that overlaps a workflow's own attempt, send-held-back-emails or a
 * retried run sends nothing twice.
 */
export function createDrainEmailOutbox(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: drainEmailOutboxFunctionId,
      name: "Send what the e-mail outbox still holds (safety net)",
      triggers: [{ cron: drainEmailOutboxCron }],
      concurrency: { limit: 1 },
      // The next run retries anyway.
      retries: 0,
    },
    async ({ step }) =>
      step.run("drain-email-outbox", () => deps.emailOutbox.drain({ limit: maxEmailsPerDrain })),
  );
}
