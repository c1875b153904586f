import type { Config } from "../config";
import type { Logger } from "../logger";
import type { AlertDeliveryObserver, Alerter } from "./alerter";
import { createLogAlerter } from "./log-alerter";
import { createSlackAlerter } from "./slack-alerter";

export function createAlerter(
  config: Config,
  logger: Logger,
  options: { onDelivery?: AlertDeliveryObserver } = {},
): Alerter {
  const runUrlTemplate = config.INNGEST_RUN_URL_TEMPLATE;
  const alertLogger = logger.child({ component: "alerts" });
  if (config.SLACK_WEBHOOK_URL !== undefined) {
    return createSlackAlerter({
      webhookUrl: config.SLACK_WEBHOOK_URL,
      runUrlTemplate,
      logger: alertLogger,
      onDelivery: options.onDelivery,
    });
  }
  if (config.isProduction) throw new Error("SLACK_WEBHOOK_URL is required when NODE_ENV=production");
  return createLogAlerter({ runUrlTemplate, logger: alertLogger, onDelivery: options.onDelivery });
}
