import type { EmailSender, SendEmailResult } from "../notifications/email-sender";
import type { Metrics } from "./metrics";

/** Counts every send by template and outcome; the sender itself stays unaware of metrics. */
export function observedEmailSender(sender: EmailSender, metrics: Metrics): EmailSender {
  async function observed(template: string, send: () => Promise<SendEmailResult>) {
    try {
      const result = await send();
      metrics.observeEmail(template, result.status);
      return result;
    } catch (error) {
      metrics.observeEmail(template, "failed");
      throw error;
    }
  }
  return {
    send: (request) => observed(request.template, () => sender.send(request)),
    sendToOrder: (request) => observed(request.template, () => sender.sendToOrder(request)),
  };
}
