import type { Inngest } from "inngest";
import { emailQueued } from "../../events/contracts";
import type { WorkflowDependencies } from "../dependencies";

export const sendHeldBackEmailsFunctionId = "send-held-back-emails";
/**
 * E-mails one run takes: Inngest's free plan batches at most 5 events (Pro 100: "Event batch
 * capacity" on its limits page), and this must work there. A longer SMTP outage spreads its
 * e-mails over several runs, each sleeping between its rounds.
 */
export const heldBackEmailsPerRun = 5;
/**
 * Rounds one run waits and retries: EMAIL_RETRY_FOR (3 days by default) at the outbox's backoff
 * (doubling from 1 minute to 1 hour) is about 78; what a run leaves, the safety-net cron
 * drain-email-outbox sends.
 */
export const maxSendRounds = 100;

/**
 * Sends the e-mails the mail server did not take when the workflow asked (an SMTP outage), each
 * when its backoff is due, until sent or given up (EMAIL_RETRY_FOR, ops alerted). Started by the
 * `shop/email.queued` the failed attempt sent, batched by Inngest (one run per burst of an
 * outage, not one per e-mail and no run at all without an outage: this was a cron every minute).
 * The run owns its batch's e-mails and sleeps durably between rounds; every e-mail is idempotent
 * by its key and leased while sent, so a run that overlaps the workflow's own attempt, the
 * safety-net cron or a retried step sends nothing twice.
 */
export function createSendHeldBackEmails(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: sendHeldBackEmailsFunctionId,
      name: "Send e-mails an SMTP outage held back",
      triggers: [emailQueued],
      batchEvents: { maxSize: heldBackEmailsPerRun, timeout: "10s" },
      retries: 3,
    },
    async ({ events, step }) => {
      const keys = [...new Set(events.map((event) => event.data.idempotencyKey))];
      const totals = { sent: 0, gaveUp: 0 };
      for (let round = 0; round < maxSendRounds; round++) {
        const outcome = await step.run("send-held-back-emails", () => deps.emailOutbox.sendQueued(keys));
        totals.sent += outcome.sent;
        totals.gaveUp += outcome.gaveUp;
        if (outcome.retryInMs === null) return { emails: keys.length, ...totals, left: 0 };
        // A wait measured on the outbox's clock, where the backoff is: no run spins on clock skew.
        await step.sleep("wait-for-retry", outcome.retryInMs);
      }
      return { emails: keys.length, ...totals, left: "to the safety-net cron" };
    },
  );
}
