import type { Inngest } from "inngest";
import { defaultRunUrlTemplate, type Alerter } from "./alerts";
import { createAlertsModule } from "./alerts/module";
import type { AppDependencies } from "./app";
import { inngestDevServerUrl, type Config } from "./config";
import { createDatabase, type Database } from "./db/client";
import { createDatabaseSessionRevocations } from "./db/ops-session-revocations";
import { createInngestPublisher, type EventPublisher } from "./events/publisher";
import type { LifecycleOutbox } from "./events/lifecycle-outbox";
import { createReadiness } from "./health/module";
import type { WorkflowDependencies } from "./inngest/dependencies";
import { createInngestModule, createWorkflowDependencies, inngestServe } from "./inngest/module";
import { createInventoryModule } from "./inventory/module";
import type { Logger } from "./logger";
import { createMetrics, metricsRoute, observedEmailSender, type Metrics } from "./metrics";
import type { OrderStatus } from "./generated/prisma/enums";
import { adminRateLimit } from "./http/rate-limit";
import { createNotificationsModule } from "./notifications/module";
import { logoOrigin } from "./shared/brand";
import { createCustomerLinks, deriveLinkSecret, type CustomerLinks } from "./pages";
import { createPagesModule } from "./pages/module";
import { createOrdersModule } from "./orders/module";
import { createOrderRepository } from "./orders/order-repository";
import { createRunFailures } from "./orders/run-failures";
import { createReturnsModule } from "./returns/module";
import { createStripeClient, type StripeClient } from "./payments/stripe-client";
import { createStripePaymentGateway } from "./payments/stripe-payment-gateway";
import type { Reconciliation } from "./reconciliation";
import { createReconciliationModule } from "./reconciliation/module";
import { durationMs } from "./shared/duration";
import { opsUrls } from "./shared/ops-urls";
import { publicBaseUrl, type ShippingProvider } from "./shipping";
import { createShippingModule } from "./shipping/module";
import { createTimeline } from "./timeline/timeline";
import { createWebhooksModule } from "./webhooks/module";

/**
 * Builds every adapter and service from the configuration with plain factory functions.
 * `endpoints` carries what server.ts resolved at start: real services from the config, or the
 * embedded stand-ins it started in their place.
 */
export interface ResolvedEndpoints {
  databaseUrl: string;
  stripeSecretKey: string;
  stripeApiBase?: string;
  stripeWebhookSecret: string;
  /** Set when the local Inngest-compatible engine runs in place of Inngest. */
  localEngineUrl?: string;
  /** The key the local engine signs its calls with; serve() then checks them as in production. */
  localEngineSigningKey?: string;
  adminToken: string;
  /** The file a generated admin token was written to (development without ADMIN_API_TOKEN). */
  adminTokenFile?: string;
  /** EasyPost, or its stand-in (createShippingProvider refuses to wire without it). */
  easyPost?: { apiKey: string; apiBase?: string };
  easyPostWebhookSecret?: string;
}

export interface Services extends AppDependencies {
  config: Config;
  db: Database;
  inngest: Inngest;
  stripe: StripeClient;
  publisher: EventPublisher;
  alerts: Alerter;
  workflow: WorkflowDependencies;
  /** The carrier the workflow books with (EasyPost, or its stand-in). */
  shippingProvider: ShippingProvider;
  /** Prometheus metrics; the webhook intakes report through `metrics.observeWebhook`. */
  metrics: Metrics;
  /** Signs and checks the customer links (tests open them as a customer would). */
  links: CustomerLinks;
  /** The daily reconciliation (the cron, /api/reconciliation and the console call it). */
  reconciliation: Reconciliation;
  /** The lifecycle events' outbox sender (docs/lifecycle-events.md). */
  lifecycleEvents: LifecycleOutbox;
  close(): Promise<void>;
}

export async function createServices(options: {
  config: Config;
  logger: Logger;
  endpoints: ResolvedEndpoints;
}): Promise<Services> {
  const { config, logger, endpoints } = options;
  const { adminToken, easyPost } = endpoints;
  const metrics = createMetrics();
  const db = createDatabase(endpoints.databaseUrl, {
    maxConnections: config.DATABASE_POOL_SIZE,
    connectionTimeoutMs: durationMs(config.DATABASE_POOL_TIMEOUT),
  });
  const publicUrl = publicBaseUrl(config);
  const links = createCustomerLinks({
    publicUrl,
    secret: config.LINK_SIGNING_SECRET ?? deriveLinkSecret(adminToken),
    ttlMs: durationMs(config.LINK_TTL),
  });
  const localEngine = endpoints.localEngineUrl !== undefined;
  const runUrlTemplate = defaultRunUrlTemplate(config, { localEngine, publicUrl });
  const timeline = createTimeline(db);
  const runFailures = createRunFailures(timeline);
  const readiness = await createReadiness(db, localEngine ? undefined : inngestDevServerUrl(config));
  const stripe = createStripeClient({
    secretKey: endpoints.stripeSecretKey,
    apiBase: endpoints.stripeApiBase,
  });
  const engine = createInngestModule({ config, logger, db, metrics, engine: endpoints, runFailures });
  const { inngest, lifecycleEvents } = engine;
  const publisher = createInngestPublisher(inngest);
  await lifecycleEvents.start();

  // What every domain module may take: each picks what it needs (their module.ts files).
  const urls = opsUrls(publicUrl);
  const base = { config, logger, db, metrics, timeline, publisher, stripe, links, adminToken, easyPost };
  const { alerts, outbox: alertOutbox } = createAlertsModule({
    ...base,
    urls,
    runUrlTemplate,
    recordRunFailure: (failure) => runFailures.runFailed(failure),
  });
  const webhooks = createWebhooksModule({ ...base, inngest, alerts, publicUrl });
  await webhooks.sealStoredSecretsAtStart();
  const onTransition = (to: OrderStatus) => metrics.observeOrderTransition(to);
  const notifications = createNotificationsModule({
    ...base,
    alerts,
    onTransition,
    observe: (sender) => observedEmailSender(sender, metrics),
  });
  const shared = { ...base, urls, alerts, sender: notifications.sender };
  const orders = createOrderRepository(db, { onTransition });
  const shipping = createShippingModule({
    ...shared,
    flagForOps: (orderId, reason) => orders.flagForOps(orderId, reason),
  });
  const { reconciliation, admin: reconciliationAdmin } = createReconciliationModule(shared);
  const inventory = createInventoryModule(shared);
  const ordersModule = createOrdersModule({
    ...shared,
    repository: orders,
    inventory: inventory.inventory,
    shipping,
    notifications,
    webhookSecret: endpoints.stripeWebhookSecret,
  });
  const payments = createStripePaymentGateway(stripe);
  const returns = createReturnsModule({ ...shared, refunds: ordersModule.refunds, payments });
  ordersModule.routeExchangePayments(returns.exchangePayments);

  const workflow = createWorkflowDependencies({
    ...shared,
    orders,
    payments,
    alertOutbox,
    notifications,
    shipping,
    inventory,
    ordersModule,
    reconciliation,
    returns: returns.workflow,
    webhooks: webhooks.workflow,
  });
  const pages = createPagesModule({
    ...shared,
    publicUrl,
    runUrlTemplate,
    localEngineUrl: endpoints.localEngineUrl,
    revocations: createDatabaseSessionRevocations(db),
    orders: ordersModule,
    notifications,
    inventory,
    shipping,
    returns,
    reconciliation,
    alertOutbox,
    webhooks,
    adminTokenFile: endpoints.adminTokenFile,
  });

  return {
    config,
    logger,
    db,
    pages,
    readiness,
    stripe,
    inngest,
    publisher,
    alerts,
    workflow,
    shippingProvider: shipping.provider,
    metrics,
    links,
    production: config.isProduction,
    ...(logoOrigin(notifications.brand) ? { logoOrigin: logoOrigin(notifications.brand) } : {}),
    reconciliation,
    lifecycleEvents,
    metricsRoute: metricsRoute(metrics, { token: config.METRICS_TOKEN }),
    adminRateLimit: adminRateLimit({ limit: config.ADMIN_RATE_LIMIT, windowMs: 60_000, token: adminToken }),
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    inngestServe: inngestServe(config, inngest, workflow, logger),
    carrierWebhook: shipping.carrierWebhook({
      easyPostSecret: endpoints.easyPostWebhookSecret,
      logger,
      markOrderDelivered: (orderId, deliveredAt) => ordersModule.markDelivered(orderId, deliveredAt),
      tellCustomer: (orderId, exception) => workflow.messages.deliveryException(orderId, exception),
      returnParcels: returns.tracking,
    }),
    returnsAdmin: returns.admin,
    webhooksAdmin: webhooks.admin,
    stripeWebhook: ordersModule.intake.stripeWebhook,
    checkout: ordersModule.intake.checkout,
    orderAdmin: ordersModule.admin,
    catalogAdmin: inventory.admin,
    reconciliationAdmin,
    async close() {
      await lifecycleEvents.stop();
      alertOutbox.close();
      notifications.transport.close?.();
      await db.$disconnect();
    },
  };
}

/** TRUST_PROXY as Express's "trust proxy" setting: a hop count, an address list, or off. */
function trustProxySetting(value: string | undefined): number | string | false {
  if (value === undefined) return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}
