import type { EmailSender } from "../notifications/email-sender";
import type { Metrics } from "./metrics";

/** Counts every send by template and outcome; the sender itself stays unaware of metrics. */
export function observedEmailSender(sender: EmailSender, metrics: Metrics): EmailSender {
  return {
    async send(request) {
      try {
        const result = await sender.send(request);
        metrics.observeEmail(request.template, result.status);
        return result;
      } catch (error) {
        metrics.observeEmail(request.template, "failed");
        throw error;
      }
    },
  };
}
