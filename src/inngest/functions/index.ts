import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";
import { createAlertExpiringAuthorizations } from "./alert-expiring-authorizations";
import { createCleanupCancelledOrder } from "./cleanup-cancelled-order";
import { createDeliverAlertGroup } from "./deliver-alert-group";
import { createDeliverOpsAlerts } from "./deliver-ops-alerts";
import { createDrainEmailOutbox } from "./drain-email-outbox";
import { createSendHeldBackEmails } from "./send-held-back-emails";
import { createFulfillOrder } from "./fulfill-order";
import { createReconcileDaily } from "./reconcile-daily";
import { createRecoverStalledOrders } from "./recover-stalled-orders";
import { createSweepMissedWebhooks } from "./sweep-missed-webhooks";
import { createSweepStaleCheckouts } from "./sweep-stale-checkouts";
import { createCheckStockLedger } from "./check-stock-ledger";
import { createWatchLowStock } from "./watch-low-stock";
import { createTrackLabelRefund } from "./track-label-refund";
import { createProcessReturn } from "./process-return";
import { createCleanupCancelledReturn } from "./cleanup-cancelled-return";
import { createRecoverStalledReturns } from "./recover-stalled-returns";
import { createDeliverWebhook } from "./deliver-webhook";

/** Every Inngest function this app serves. */
export function createFunctions(inngest: Inngest, deps: WorkflowDependencies) {
  return [
    createFulfillOrder(inngest, deps),
    createCleanupCancelledOrder(inngest, deps),
    createRecoverStalledOrders(inngest, deps),
    createSweepMissedWebhooks(inngest, deps),
    createAlertExpiringAuthorizations(inngest, deps),
    createDrainEmailOutbox(inngest, deps),
    createSendHeldBackEmails(inngest, deps),
    createSweepStaleCheckouts(inngest, deps),
    createDeliverOpsAlerts(inngest, deps),
    createDeliverAlertGroup(inngest, deps),
    ...(deps.lowStock ? [createWatchLowStock(inngest, deps.lowStock)] : []),
    ...(deps.stockLedger ? [createCheckStockLedger(inngest, deps.stockLedger, deps.alerts)] : []),
    createReconcileDaily(inngest, deps),
    createTrackLabelRefund(inngest, deps),
    createProcessReturn(inngest, deps),
    createCleanupCancelledReturn(inngest, deps),
    createRecoverStalledReturns(inngest, deps),
    ...(deps.webhooks ? [createDeliverWebhook(inngest, deps.webhooks)] : []),
  ];
}
