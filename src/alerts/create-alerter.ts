import { IncomingWebhook } from "@slack/webhook";
import { inngestDevServerUrl, type Config } from "../config";
import type { Database } from "../db/client";
import type { Logger } from "../logger";
import type { AlertDeliveryObserver, Alerter } from "./alerter";
import { createAlertOutbox, type AlertOutbox } from "./alert-outbox";
import { createDurableAlerter } from "./durable-alerter";
import { createLogAlerter } from "./log-alerter";

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

/** With no Slack (development) alerts are logged at once: there is nothing to keep them for. */
const noOutbox: AlertOutbox = {
  enqueue: () => Promise.resolve(),
  drain: () => Promise.resolve({ messages: 0, delivered: 0, retrying: 0 }),
  deliverGroup: () => Promise.resolve({ messages: 0, delivered: 0, retrying: 0, retryInMs: null }),
  backlog: () => Promise.resolve({ undelivered: 0 }),
  close: () => undefined,
};

/** A hung Slack must not hold a delivery (and its lease) for long. */
const slackTimeoutMs = 5_000;

export function createAlerter(
  config: Config,
  logger: Logger,
  options: {
    db: Database;
    groupWindowMs: number;
    onDelivery?: AlertDeliveryObserver;
    onBacklog?: (undelivered: number) => void;
    /** Each stored alert's event (the app's `shop/ops-alert.queued`); see createAlertOutbox. */
    onQueued?: (alert: { key: string; group: string }) => Promise<void>;
    runUrlTemplate?: string;
    /** The order's page in the ops console. */
    orderUrl?: (orderId: string) => string;
    now?: () => Date;
  },
): { alerter: Alerter; outbox: AlertOutbox } {
  const runUrlTemplate =
    options.runUrlTemplate ??
    defaultRunUrlTemplate(config, { localEngine: false, publicUrl: config.PUBLIC_URL ?? "http://localhost" });
  const orderUrl = options.orderUrl;
  const alertLogger = logger.child({ component: "alerts" });
  if (config.SLACK_WEBHOOK_URL !== undefined) {
    const webhook = new IncomingWebhook(config.SLACK_WEBHOOK_URL, { timeout: slackTimeoutMs });
    const outbox = createAlertOutbox({
      db: options.db,
      send: async (message) => {
        await webhook.send(message);
      },
      logger: alertLogger,
      groupWindowMs: options.groupWindowMs,
      ...(options.onDelivery ? { onDelivery: options.onDelivery } : {}),
      ...(options.onBacklog ? { onBacklog: options.onBacklog } : {}),
      ...(options.onQueued ? { onQueued: options.onQueued } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    return {
      alerter: createDurableAlerter({ outbox, runUrlTemplate, ...(orderUrl ? { orderUrl } : {}) }),
      outbox,
    };
  }
  if (config.isProduction) throw new Error("SLACK_WEBHOOK_URL is required when NODE_ENV=production");
  return {
    alerter: createLogAlerter({
      runUrlTemplate,
      ...(orderUrl ? { orderUrl } : {}),
      logger: alertLogger,
      onDelivery: options.onDelivery,
    }),
    outbox: noOutbox,
  };
}
