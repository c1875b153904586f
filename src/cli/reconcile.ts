import { parseArgs } from "node:util";
import { createAlerter } from "../alerts";
import { ConfigError, loadConfig } from "../config";
import { createDatabase } from "../db/client";
import { isAppError } from "../errors";
import { createStockLedger } from "../inventory/stock-ledger";
import { createLogger } from "../logger";
import { createStripeClient, stripeKeyIsLive } from "../payments/stripe-client";
import { createEasyPostLedger, createReconciliation, createStripeLedger } from "../reconciliation";
import { durationMs } from "../shared/duration";
import { lazyEasyPostClient, publicBaseUrl } from "../shipping";

const usage =
  "usage: npm run reconcile [-- --date YYYY-MM-DD]   (without --date: today in SHOP_TIME_ZONE, so far)";

class UsageError extends Error {}

/**
 * `npm run reconcile -- --date YYYY-MM-DD`, or without a date for today: the reconciliation of one shop day, the same
 * function as the cron, the admin API and the console. Prints the report (JSON, as
 * GET /api/reconciliation/runs/:id answers it) on stdout and a summary on stderr. Under src/ so
 * the production image ships it (`node dist/cli/reconcile.js --date …`).
 */
async function main(): Promise<void> {
  let date: string | undefined;
  try {
    const { values } = parseArgs({ options: { date: { type: "string" }, help: { type: "boolean" } } });
    if (values.help) {
      process.stdout.write(`${usage}\n`);
      return;
    }
    date = values.date;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage}`);
  }

  const config = loadConfig();
  const missing = (["DATABASE_URL", "STRIPE_SECRET_KEY"] as const).filter((name) => !config[name]);
  if (missing.length > 0)
    throw new ConfigError(missing.map((name) => `${name}: required by reconcile (it reads the real books)`));
  const logger = createLogger({ level: config.LOG_LEVEL });
  const db = createDatabase(config.DATABASE_URL as string);
  const publicUrl = publicBaseUrl(config).replace(/\/+$/, "");
  const orderUrl = (orderId: string) => `${publicUrl}/ops/orders/${orderId}`;
  try {
    const reconciliation = createReconciliation({
      db,
      stripe: createStripeLedger(
        createStripeClient({
          secretKey: config.STRIPE_SECRET_KEY as string,
          apiBase: config.STRIPE_API_BASE,
        }),
        { livemode: stripeKeyIsLive(config.STRIPE_SECRET_KEY) },
      ),
      ...(config.EASYPOST_API_KEY
        ? {
            carrier: createEasyPostLedger(
              lazyEasyPostClient({
                apiKey: config.EASYPOST_API_KEY,
                ...(config.EASYPOST_API_BASE ? { apiBase: config.EASYPOST_API_BASE } : {}),
              }),
            ),
          }
        : {}),
      // The alert is kept in the ops-alert outbox; the running service's delivery cron sends it.
      alerts: createAlerter(config, logger, {
        db,
        groupWindowMs: durationMs(config.ALERT_GROUP_WINDOW),
        orderUrl,
      }).alerter,
      logger,
      timeZone: config.SHOP_TIME_ZONE,
      shipWithinMs: durationMs(config.RECONCILIATION_SHIP_WITHIN),
      stockLedger: createStockLedger(db),
      reportUrl: (runId) => `${publicUrl}/ops/reconciliation/${runId}`,
      orderUrl,
      productUrl: (sku) => `${publicUrl}/ops/products/${encodeURIComponent(sku)}`,
    });
    const report = await reconciliation.run({ ...(date !== undefined ? { date } : {}), by: "cli" });
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.stderr.write(
      `reconciled ${report.date} (${report.timeZone}): ${report.mismatchCount} mismatch(es), ` +
        `${report.stripeTransactions} Stripe transaction(s), ${report.carrierShipments} carrier label(s)\n`,
    );
  } finally {
    await db.$disconnect();
  }
}

main().catch((error: unknown) => {
  const readable =
    error instanceof UsageError ||
    error instanceof ConfigError ||
    (isAppError(error) && error.code !== "internal_error");
  process.stderr.write(`reconcile failed: ${readable ? (error as Error).message : String(error)}\n`);
  process.exit(1);
});
