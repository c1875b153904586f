import { IncomingWebhook, type IncomingWebhookSendArguments } from "@slack/webhook";
import type { Logger } from "../logger";
import { runUrl, type AlertDeliveryObserver, type Alerter } from "./alerter";
import { noticeMessage, runFailedMessage } from "./slack-message";

export function createSlackAlerter(options: {
  webhookUrl: string;
  runUrlTemplate: string;
  /** The order's page in the ops console, linked beside the run. */
  orderUrl?: (orderId: string) => string;
  logger: Logger;
  /** A hung Slack must not hold a failure handler for long. */
  timeoutMs?: number;
  onDelivery?: AlertDeliveryObserver;
}): Alerter {
  const { runUrlTemplate, logger } = options;
  const webhook = new IncomingWebhook(options.webhookUrl, { timeout: options.timeoutMs ?? 5_000 });

  async function deliver(
    message: IncomingWebhookSendArguments,
    context: Record<string, unknown> & { kind: "run-failed" | "notice" },
  ): Promise<void> {
    try {
      await webhook.send(message);
      options.onDelivery?.(context.kind, "sent");
      logger.info(context, "alert delivered to Slack");
    } catch (error) {
      options.onDelivery?.(context.kind, "failed");
      // The webhook URL is a secret: log the failure and the alert, never the URL.
      logger.error(
        { err: error, alert: context, text: message.text },
        "alert could not be delivered to Slack",
      );
    }
  }

  return {
    runFailed(failure) {
      const orderLink = failure.orderId && options.orderUrl ? options.orderUrl(failure.orderId) : undefined;
      return deliver(runFailedMessage(failure, runUrl(runUrlTemplate, failure.runId), orderLink), {
        kind: "run-failed",
        functionId: failure.functionId,
        runId: failure.runId,
        orderId: failure.orderId,
      });
    },
    notify(notice) {
      const link = notice.runId === undefined ? undefined : runUrl(runUrlTemplate, notice.runId);
      return deliver(noticeMessage(notice, link), { kind: "notice", title: notice.title });
    },
  };
}
