import type { Config } from "../config";
import type { Database } from "../db/client";
import { opsAlertQueuedEvent } from "../events/contracts";
import type { EventPublisher } from "../events/publisher";
import type { Logger } from "../logger";
import { durationMs } from "../shared/duration";
import type { AlertDeliveryObserver, Alerter, RunFailure } from "./alerter";
import { createAlerter } from "./create-alerter";

/**
 * The ops alerts, composed in their own folder: with Slack, alerts are kept in the database until
 * delivered and grouped in a storm (src/alerts/alert-outbox.ts); the cron deliver-ops-alerts
 * retries what failed.
 */
export function createAlertsModule(shared: {
  config: Config;
  logger: Logger;
  db: Database;
  /** The metrics' alert counters (src/metrics), named here: the metrics sit above the alerts. */
  metrics: { observeAlert: AlertDeliveryObserver; setUndeliveredAlerts(undelivered: number): void };
  publisher: EventPublisher;
  runUrlTemplate: string;
  /** The ops console's pages: an order's is linked from its alerts. */
  urls: { order(orderId: string): string };
  /** Puts a failed run on its order's timeline (src/orders/run-failures.ts). */
  recordRunFailure: (failure: RunFailure) => Promise<void>;
}) {
  const { config, metrics, publisher } = shared;
  const orderUrl = (orderId: string) => shared.urls.order(orderId);
  const { alerter, outbox } = createAlerter(config, shared.logger, {
    db: shared.db,
    groupWindowMs: durationMs(config.ALERT_GROUP_WINDOW),
    onDelivery: (kind, outcome) => metrics.observeAlert(kind, outcome),
    onBacklog: (undelivered) => metrics.setUndeliveredAlerts(undelivered),
    // Each alert's group is delivered by deliver-alert-group, debounced over the window.
    onQueued: ({ key, group }) => publisher.publish(opsAlertQueuedEvent({ group, alertKey: key })),
    runUrlTemplate: shared.runUrlTemplate,
    orderUrl,
  });
  // A failed run is also put on its order's timeline: the ops console's "failed" filter finds it.
  const alerts: Alerter = {
    // A notice about one order links its page in the ops console.
    notify: (notice) =>
      alerter.notify(
        typeof notice.fields.orderId === "string"
          ? { ...notice, fields: { ...notice.fields, orderPage: orderUrl(notice.fields.orderId) } }
          : notice,
      ),
    async runFailed(failure) {
      await shared.recordRunFailure(failure);
      await alerter.runFailed(failure);
    },
  };
  return { alerts, outbox };
}

export type AlertsModule = ReturnType<typeof createAlertsModule>;
