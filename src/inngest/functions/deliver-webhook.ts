import type { Inngest } from "inngest";
import { webhookDeliveryRequested } from "../../events/webhook-contracts";
import { durationMs } from "../../shared/duration";
import type { WebhookWorkflowDependencies } from "../dependencies";

export const deliverWebhookFunctionId = "deliver-webhook";

/**
 * Delivers one lifecycle event to one webhook endpoint (decision 0198), signed per Standard
 * Webhooks. Each attempt is a step of its own (`attempt-<n>`, idempotent by the attempt key
 * `<delivery>:<n>`), and the backoff between them is a durable sleep (`backoff-<n>`), so the
 * schedule (WEBHOOK_RETRY_SCHEDULE, by default 8 attempts over about 27.5 hours) is not bound by
 * Inngest's 20 retries and a restart loses no place in it. An answer outside 2xx (a redirect
 * included) is a failed attempt, not a failed step: the step fails only when the database does, and
 * Inngest retries it. A "send again" (`resend` n) is one attempt (`send-again-<n>`, key
 * `<delivery>:again-<n>`), with the same webhook-id.
 */
export function createDeliverWebhook(inngest: Inngest, deps: WebhookWorkflowDependencies) {
  const schedule = deps.retrySchedule;
  return inngest.createFunction(
    {
      id: deliverWebhookFunctionId,
      name: "Deliver a signed webhook",
      triggers: [webhookDeliveryRequested],
      // A burst of events to one endpoint is a few POSTs at a time, not hundreds; a sleeping
      // delivery holds no slot. Endpoints do not wait for each other.
      concurrency: [{ limit: 5, key: "event.data.endpointId" }],
      retries: 5,
    },
    async ({ event, step }) => {
      const { deliveryId, resend } = event.data;
      if (resend !== undefined) {
        return step.run(`send-again-${resend}`, () =>
          deps.delivery.attempt(deliveryId, {
            attemptKey: `${deliveryId}:again-${resend}`,
            scheduled: false,
            nextDelayMs: null,
          }),
        );
      }
      for (let n = 1; ; n++) {
        const delay = schedule[n - 1];
        const result = await step.run(`attempt-${n}`, () =>
          deps.delivery.attempt(deliveryId, {
            attemptKey: `${deliveryId}:${n}`,
            scheduled: true,
            nextDelayMs: delay !== undefined ? durationMs(delay) : null,
          }),
        );
        if (result.outcome !== "failed" || delay === undefined) return { ...result, attempts: n };
        await step.sleep(`backoff-${n}`, delay);
      }
    },
  );
}
