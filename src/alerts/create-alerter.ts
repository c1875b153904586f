import { inngestDevServerUrl, type Config } from "../config";
import type { Logger } from "../logger";
import type { AlertDeliveryObserver, Alerter } from "./alerter";
import { createLogAlerter } from "./log-alerter";
import { createSlackAlerter } from "./slack-alerter";

/**
 * Where a run is shown when INNGEST_RUN_URL_TEMPLATE is unset: the ops console's run page with the
 * local engine (it has no UI of its own), the dev server's run view with INNGEST_DEV, otherwise
 * the Inngest dashboard.
 */
export function defaultRunUrlTemplate(
  config: Config,
  options: { localEngine: boolean; publicUrl: string },
): string {
  if (config.INNGEST_RUN_URL_TEMPLATE !== undefined) return config.INNGEST_RUN_URL_TEMPLATE;
  if (options.localEngine) return `${options.publicUrl.replace(/\/+$/, "")}/ops/runs/{runId}`;
  const devServerUrl = inngestDevServerUrl(config);
  if (devServerUrl !== undefined) return `${devServerUrl.replace(/\/+$/, "")}/run?runID={runId}`;
  return "https://app.inngest.com/env/production/runs/{runId}";
}

export function createAlerter(
  config: Config,
  logger: Logger,
  options: {
    onDelivery?: AlertDeliveryObserver;
    runUrlTemplate?: string;
    /** The order's page in the ops console. */
    orderUrl?: (orderId: string) => string;
  } = {},
): Alerter {
  const runUrlTemplate =
    options.runUrlTemplate ??
    defaultRunUrlTemplate(config, { localEngine: false, publicUrl: config.PUBLIC_URL ?? "http://localhost" });
  const orderUrl = options.orderUrl;
  const alertLogger = logger.child({ component: "alerts" });
  if (config.SLACK_WEBHOOK_URL !== undefined) {
    return createSlackAlerter({
      webhookUrl: config.SLACK_WEBHOOK_URL,
      runUrlTemplate,
      ...(orderUrl ? { orderUrl } : {}),
      logger: alertLogger,
      onDelivery: options.onDelivery,
    });
  }
  if (config.isProduction) throw new Error("SLACK_WEBHOOK_URL is required when NODE_ENV=production");
  return createLogAlerter({
    runUrlTemplate,
    ...(orderUrl ? { orderUrl } : {}),
    logger: alertLogger,
    onDelivery: options.onDelivery,
  });
}
