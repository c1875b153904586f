import type Stripe from "stripe";
import type { Alerter } from "../alerts";
import type { Config } from "../config";
import type { Database } from "../db/client";
import { createStockLedger } from "../inventory/stock-ledger";
import type { Logger } from "../logger";
import { durationMs } from "../shared/duration";
import { stripeKeyIsLive } from "../payments/stripe-client";
import { lazyEasyPostClient } from "../shipping";
import { reconciliationAdminRoutes } from "./admin-routes";
import { createEasyPostLedger } from "./carrier-ledger";
import { createReconciliation } from "./reconcile";
import { createStripeLedger } from "./stripe-ledger";

/**
 * The daily reconciliation against Stripe and the carrier, composed in its own folder (the cron,
 * /api/reconciliation and the console call it), and its admin routes.
 */
export function createReconciliationModule(shared: {
  config: Config;
  db: Database;
  stripe: Stripe;
  /** EasyPost (or its stand-in): without it, no carrier ledger is read. */
  easyPost: { apiKey: string; apiBase?: string } | undefined;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
  adminToken: string;
  urls: {
    report(runId: string): string;
    order(orderId: string): string;
    product(sku: string): string;
  };
}) {
  const { config, db, easyPost, urls } = shared;
  const reconciliation = createReconciliation({
    db,
    stripe: createStripeLedger(shared.stripe, { livemode: stripeKeyIsLive(config.STRIPE_SECRET_KEY) }),
    ...(easyPost ? { carrier: createEasyPostLedger(lazyEasyPostClient(easyPost)) } : {}),
    alerts: shared.alerts,
    logger: shared.logger,
    timeZone: config.SHOP_TIME_ZONE,
    shipWithinMs: durationMs(config.RECONCILIATION_SHIP_WITHIN),
    stockLedger: createStockLedger(db),
    reportUrl: (runId) => urls.report(runId),
    orderUrl: (orderId) => urls.order(orderId),
    productUrl: (sku) => urls.product(sku),
  });
  return {
    reconciliation,
    admin: reconciliationAdminRoutes({ adminToken: shared.adminToken, reconciliation }),
  };
}
