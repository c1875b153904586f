import type { Logger } from "../logger";
import { runUrl, type AlertDeliveryObserver, type Alerter } from "./alerter";

/** Without SLACK_WEBHOOK_URL (outside production), alerts land in the log at error level. */
export function createLogAlerter(options: {
  runUrlTemplate: string;
  orderUrl?: (orderId: string) => string;
  logger: Logger;
  onDelivery?: AlertDeliveryObserver;
}): Alerter {
  const { runUrlTemplate, logger } = options;
  return {
    async runFailed(failure) {
      logger.error(
        {
          alert: {
            ...failure,
            runUrl: runUrl(runUrlTemplate, failure.runId),
            ...(failure.orderId && options.orderUrl ? { orderUrl: options.orderUrl(failure.orderId) } : {}),
          },
        },
        `ALERT run failed: ${failure.functionId}`,
      );
      options.onDelivery?.("run-failed", "logged");
    },
    async notify(notice) {
      const link = notice.runId === undefined ? {} : { runUrl: runUrl(runUrlTemplate, notice.runId) };
      logger.error({ alert: { ...notice, ...link } }, `ALERT ${notice.title}`);
      options.onDelivery?.("notice", "logged");
    },
  };
}
