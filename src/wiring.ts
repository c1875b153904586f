import { serve } from "inngest/express";
import type { Inngest } from "inngest";
import { createAlerter, defaultRunUrlTemplate, type Alerter } from "./alerts";
import type { AppDependencies } from "./app";
import { inngestDevServerUrl, type Config } from "./config";
import { createDatabase, type Database } from "./db/client";
import {
  combineReadiness,
  createDatabaseReadiness,
  createInngestDevServerReadiness,
} from "./health/readiness";
import { createInngestClient } from "./inngest/client";
import { customerDataEncryption } from "./inngest/encryption";
import { customerDataScrubbing } from "./inngest/error-scrubbing";
import type { WorkflowDependencies } from "./inngest/dependencies";
import { createFunctions } from "./inngest/functions";
import { pinnedServeUrl } from "./inngest/serve-url";
import { createInngestPublisher, type EventPublisher } from "./events/publisher";
import { emailQueuedEvent, opsAlertQueuedEvent } from "./events/contracts";
import { createLifecycleEventsModule } from "./events/module";
import type { LifecycleOutbox } from "./events/lifecycle-outbox";
import { webhookDeliveryEvents } from "./webhooks/dispatch";
import { createWebhooksModule } from "./webhooks/module";
import { createPrismaInventoryRepository } from "./inventory/prisma-inventory-repository";
import { withStockHolds } from "./inventory/holding-inventory";
import { createStockHolds } from "./inventory/stock-holds";
import { createCatalog } from "./inventory/catalog";
import { createCatalogCsv } from "./inventory/catalog-csv";
import { catalogAdminRoutes } from "./inventory/catalog-routes";
import { createLowStockWatch } from "./inventory/low-stock";
import { createStockLedger } from "./inventory/stock-ledger";
import type { Logger } from "./logger";
import {
  createMetrics,
  metricsRoute,
  observedEmailSender,
  workflowObservability,
  type Metrics,
} from "./metrics";
import { inngestEndpoint } from "./http/inngest-endpoint";
import { adminRateLimit } from "./http/rate-limit";
import { createEmailSender, createEmailTransport } from "./notifications";
import { createEmailRenderer } from "./notifications/email-renderer";
import { brandedEmailSender } from "./notifications/branded-email-sender";
import { brandFromConfig, logoOrigin } from "./shared/brand";
import { createDatabaseSessionRevocations } from "./db/ops-session-revocations";
import { defaultRetryPolicy } from "./notifications/email-sender";
import { createOrderEmails } from "./notifications/order-emails";
import { createFreshLinks } from "./notifications/fresh-link";
import {
  createCustomerLinks,
  createOpsSessions,
  createRunSource,
  deriveLinkSecret,
  pagesRouter,
  type CustomerLinks,
} from "./pages";
import path from "node:path";
import { orderAdminRoutes } from "./orders/admin-routes";
import { createOrderIntake } from "./orders/order-intake";
import type { ExchangePaymentEvents } from "./returns/exchange-payment-events";
import { createReturnsModule } from "./returns/module";
import { createCustomerDataLookup } from "./orders/customer-data";
import { createFulfilmentRecords } from "./orders/fulfilment-records";
import { createOrderRepository } from "./orders/order-repository";
import { createRefunds } from "./orders/refund-order";
import { disputeHoldOf } from "./orders/disputed-amount";
import { createLabelVoids } from "./shipping/label-void";
import { createCarrierExceptions } from "./shipping/carrier-exceptions";
import { createHolds } from "./orders/hold-order";
import { createAddressCorrections } from "./orders/correct-address";
import { createOrderActions } from "./orders/order-actions";
import { createOrderQueries } from "./orders/order-queries";
import { createOrderRedrive } from "./orders/redrive-order";
import { createReviews } from "./orders/review-order";
import { createRunFailures } from "./orders/run-failures";
import { checkoutPayUrl } from "./payments/stripe-checkout";
import {
  createEasyPostLedger,
  createReconciliation,
  createStripeLedger,
  reconciliationAdminRoutes,
  type Reconciliation,
} from "./reconciliation";
import { createParcelTracking } from "./shipping/parcel-tracking";
import { createPrismaCarrierShipmentIds } from "./shipping/carrier-shipment-ids";
import { createTimeline } from "./timeline/timeline";
import { createPaymentRepository } from "./payments/payment-repository";
import { createStripeClient, type StripeClient } from "./payments/stripe-client";
import { createStripePaymentGateway } from "./payments/stripe-payment-gateway";
import {
  createExpiringAuthorizations,
  createRecoveryCheckpoints,
  createStalledOrders,
  createStripeEventSource,
} from "./recovery";
import { durationMs } from "./shared/duration";
import {
  carrierWebhookRouter,
  createShipmentBooking,
  createShipmentRepository,
  createShippingDestinations,
  createShippingProvider,
  lazyEasyPostClient,
  publicBaseUrl,
  type ShippingProvider,
} from "./shipping";

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
  const metrics = createMetrics();
  const db = createDatabase(endpoints.databaseUrl, {
    maxConnections: config.DATABASE_POOL_SIZE,
    connectionTimeoutMs: durationMs(config.DATABASE_POOL_TIMEOUT),
  });
  const publicUrl = publicBaseUrl(config);
  const links = createCustomerLinks({
    publicUrl,
    secret: config.LINK_SIGNING_SECRET ?? deriveLinkSecret(endpoints.adminToken),
    ttlMs: durationMs(config.LINK_TTL),
  });
  const runUrlTemplate = defaultRunUrlTemplate(config, {
    localEngine: endpoints.localEngineUrl !== undefined,
    publicUrl,
  });
  const opsOrderUrl = (orderId: string) => `${publicUrl.replace(/\/+$/, "")}/ops/orders/${orderId}`;
  const timeline = createTimeline(db);
  // The ops console shows a run's failed step with its attempts, and the "failed" filter finds a
  // failed run, from these timeline entries.
  const runFailures = createRunFailures(timeline);
  const recordStepFailure = (failure: Parameters<typeof runFailures.stepFailed>[0]) => {
    runFailures
      .stepFailed(failure)
      .catch((error: unknown) => logger.warn({ err: error, ...failure }, "could not record a failed step"));
  };
  const databaseReadiness = await createDatabaseReadiness(db);
  const devServer = endpoints.localEngineUrl === undefined ? inngestDevServerUrl(config) : undefined;
  const readiness =
    devServer === undefined
      ? databaseReadiness
      : combineReadiness([databaseReadiness, createInngestDevServerReadiness(devServer)]);
  const stripe = createStripeClient({
    secretKey: endpoints.stripeSecretKey,
    apiBase: endpoints.stripeApiBase,
  });
  const inngest = createInngestClient(config, {
    localEngineUrl: endpoints.localEngineUrl,
    localEngineSigningKey: endpoints.localEngineSigningKey,
    logger,
    middleware: [
      workflowObservability({ metrics, logger, onFinalStepFailure: recordStepFailure }),
      // Errors go to Inngest in clear, encrypted or not: the customer's data is masked in them.
      customerDataScrubbing({ customerData: createCustomerDataLookup(db) }),
      ...(config.INNGEST_ENCRYPTION_KEY
        ? [
            customerDataEncryption({
              current: config.INNGEST_ENCRYPTION_KEY,
              previous: config.INNGEST_ENCRYPTION_KEY_PREVIOUS,
            }),
          ]
        : []),
    ],
  });
  const publisher = createInngestPublisher(inngest);
  // The shop's lifecycle events, from their outbox: a client of their own, unencrypted (module.ts).
  const lifecycleClient = createInngestClient(config, {
    localEngineUrl: endpoints.localEngineUrl,
    localEngineSigningKey: endpoints.localEngineSigningKey,
    logger,
  });
  const lifecycleEvents = createLifecycleEventsModule({
    db,
    databaseUrl: endpoints.databaseUrl,
    sink: { send: (events) => lifecycleClient.send(events) },
    logger,
    companions: webhookDeliveryEvents,
  });
  await lifecycleEvents.start();

  const orders = createOrderRepository(db, { onTransition: (to) => metrics.observeOrderTransition(to) });
  const emailTransport = createEmailTransport(config, logger);
  const shipmentRecords = createShipmentRepository(db);
  const shippingDestinations = createShippingDestinations(db);
  // With Slack, alerts are kept in the database until delivered and grouped in a storm
  // (src/alerts/alert-outbox.ts); the cron deliver-ops-alerts retries what failed.
  const { alerter, outbox: alertOutbox } = createAlerter(config, logger, {
    db,
    groupWindowMs: durationMs(config.ALERT_GROUP_WINDOW),
    onDelivery: (kind, outcome) => metrics.observeAlert(kind, outcome),
    onBacklog: (undelivered) => metrics.setUndeliveredAlerts(undelivered),
    // Each alert's group is delivered by deliver-alert-group, debounced over the window.
    onQueued: ({ key, group }) => publisher.publish(opsAlertQueuedEvent({ group, alertKey: key })),
    runUrlTemplate,
    orderUrl: opsOrderUrl,
  });
  // A failed run is also put on its order's timeline: the ops console's "failed" filter finds it.
  const alerts: Alerter = {
    // A notice about one order links its page in the ops console.
    notify: (notice) =>
      alerter.notify(
        typeof notice.fields.orderId === "string"
          ? { ...notice, fields: { ...notice.fields, orderPage: opsOrderUrl(notice.fields.orderId) } }
          : notice,
      ),
    async runFailed(failure) {
      await runFailures.runFailed(failure);
      await alerter.runFailed(failure);
    },
  };
  const webhooks = createWebhooksModule({
    ...{ config, db, inngest, alerts, logger, publicUrl },
    adminToken: endpoints.adminToken,
  });
  const emailDelivery = createEmailSender({
    db,
    transport: emailTransport,
    from: config.EMAIL_FROM,
    logger,
    retry: { ...defaultRetryPolicy, giveUpAfterMs: durationMs(config.EMAIL_RETRY_FOR) },
    onGiveUp: (email) =>
      alerts.notify({
        title: "E-mail given up after retrying",
        fields: { ...email, orderId: email.orderId ?? undefined, action: "Reach the customer another way" },
      }),
    // An e-mail left in the outbox is retried by send-held-back-emails, batched.
    onQueued: (email) => publisher.publish(emailQueuedEvent(email)),
  });
  const brand = brandFromConfig(config);
  const sender = observedEmailSender(brandedEmailSender(emailDelivery, brand), metrics);

  const carrierShipmentIds = createPrismaCarrierShipmentIds(db);
  const shippingProvider = createShippingProvider(config, endpoints.easyPost, carrierShipmentIds);
  const redrive = createOrderRedrive(db);
  const reconciliation = createReconciliation({
    db,
    stripe: createStripeLedger(stripe),
    ...(endpoints.easyPost ? { carrier: createEasyPostLedger(lazyEasyPostClient(endpoints.easyPost)) } : {}),
    alerts,
    logger,
    timeZone: config.SHOP_TIME_ZONE,
    shipWithinMs: durationMs(config.RECONCILIATION_SHIP_WITHIN),
    stockLedger: createStockLedger(db),
    reportUrl: (runId) => `${publicUrl.replace(/\/+$/, "")}/ops/reconciliation/${runId}`,
    orderUrl: opsOrderUrl,
    productUrl: (sku) => `${publicUrl.replace(/\/+$/, "")}/ops/products/${encodeURIComponent(sku)}`,
  });
  const holds = createHolds({ db, timeline, publisher });
  const labels = createLabelVoids({
    provider: shippingProvider,
    shipments: shipmentRecords,
    timeline,
    alerts,
    publisher,
    flagForOps: (orderId, reason) => orders.flagForOps(orderId, reason),
  });
  const inventory = createPrismaInventoryRepository(db);
  const lowStock = createLowStockWatch(db, {
    alerts,
    opsProductUrl: (sku) => `${publicUrl.replace(/\/+$/, "")}/ops/products/${encodeURIComponent(sku)}`,
  });
  const stockLedger = createStockLedger(db);
  const catalog = createCatalog(db, { ledger: stockLedger, lowStock });
  // The returns' side of the Stripe webhook (an exchange's difference paid on Checkout), set once
  // the returns are built below; the webhook serves nothing before the app is built.
  const exchangePayments: { events?: ExchangePaymentEvents | undefined } = {};
  const intake = createOrderIntake({
    db,
    stripe,
    exchanges: {
      owns: (event) => exchangePayments.events?.owns(event) ?? false,
      handle: (event) => {
        if (!exchangePayments.events) throw new Error("exchange payments are not wired");
        return exchangePayments.events.handle(event);
      },
    },
    voidLabel: (orderId) => labels.voidLabel(orderId, "refunded"),
    holds,
    inventory,
    publisher,
    logger,
    alerts,
    webhookSecret: endpoints.stripeWebhookSecret,
    captureMethod: config.PAYMENT_CAPTURE,
    publicUrl: publicBaseUrl(config),
    links,
    shipping: {
      allowedCountries: config.SHIPPING_COUNTRIES.split(","),
      collectPhone: config.SHIPPING_COLLECT_PHONE,
    },
    ...(config.SHIPPING_RATE_TABLE
      ? {
          shippingRates: {
            table: config.SHIPPING_RATE_TABLE,
            itemWeightOz: config.SHIPPING_ITEM_WEIGHT_OZ,
            maxWeightOz: config.SHIPPING_MAX_PARCEL_WEIGHT_OZ,
          },
        }
      : {}),
    sessionTtlMs: durationMs(config.CHECKOUT_SESSION_TTL),
    ...(config.CHECKOUT_API_TOKEN !== undefined ? { checkoutToken: config.CHECKOUT_API_TOKEN } : {}),
    metrics,
    onTransition: (to) => metrics.observeOrderTransition(to),
  });

  const refunds = createRefunds({
    db,
    stripe,
    sender,
    logger,
    onFullRefund: (orderId) => labels.voidLabel(orderId, "refunded").then(() => undefined),
    alerts,
  });
  const payments = createStripePaymentGateway(stripe);
  const returns = createReturnsModule({
    config,
    db,
    stripe,
    publisher,
    timeline,
    refunds,
    payments,
    sender,
    alerts,
    logger,
    links,
    adminToken: endpoints.adminToken,
    ...(endpoints.easyPost ? { easyPost: endpoints.easyPost } : {}),
  });
  exchangePayments.events = returns.exchangePayments;

  const workflow: WorkflowDependencies = {
    orders,
    fulfilment: createFulfilmentRecords(db, {
      onTransition: (to) => metrics.observeOrderTransition(to),
    }),
    timeline,
    // Reserve converts the checkout's stock hold; see src/inventory/holding-inventory.ts.
    inventory: withStockHolds(inventory, { holds: createStockHolds(db), alerts, logger }),
    payments,
    paymentRecords: createPaymentRepository(db),
    disputes: { holdOf: (orderId) => disputeHoldOf(db, orderId) },
    shipments: createShipmentBooking({
      provider: shippingProvider,
      shipments: shipmentRecords,
      destinations: shippingDestinations,
      limits: {
        itemWeightOz: config.SHIPPING_ITEM_WEIGHT_OZ,
        maxWeightOz: config.SHIPPING_MAX_PARCEL_WEIGHT_OZ,
      },
    }),
    labels,
    holds,
    messages: createOrderEmails({
      db,
      sender,
      links,
      onTransition: (to) => metrics.observeOrderTransition(to),
    }),
    emailOutbox: emailDelivery,
    alerts,
    alertOutbox,
    lowStock,
    stockLedger,
    settings: {
      cancelWindow: config.CANCEL_WINDOW,
      labelRefundCheckEvery: config.LABEL_REFUND_CHECK_EVERY,
      labelRefundChecks: Math.max(
        1,
        Math.ceil((30 * 86_400_000) / durationMs(config.LABEL_REFUND_CHECK_EVERY)),
      ),
      fulfilmentHold: config.FULFILMENT_HOLD,
      reviewDelay: config.REVIEW_DELAY,
      reviewAfterDelivery: config.REVIEW_AFTER_DELIVERY,
      partialFulfilment: config.PARTIAL_FULFILMENT,
      alertGroupWindow: config.ALERT_GROUP_WINDOW,
    },
    recovery: {
      stalledOrders: createStalledOrders(db),
      expiringAuthorizations: createExpiringAuthorizations(db),
      checkpoints: createRecoveryCheckpoints(db),
      stripeEvents: createStripeEventSource(stripe),
      intake: intake.intake,
      redrive,
      checkouts: intake.checkoutSweep,
      reconciliation,
    },
    ...(returns.workflow ? { returns: returns.workflow } : {}),
    webhooks: webhooks.workflow,
  };

  const renderer = createEmailRenderer({ db, links, brand });
  // One object of use cases for both doors: the admin API and the ops console.
  const actions = createOrderActions({
    db,
    orders,
    publisher,
    timeline,
    redrive,
    refunds,
    labels,
    holds,
    sender,
    renderer,
    cancelWindowMs: durationMs(config.CANCEL_WINDOW),
    checkoutSessionTtl: config.CHECKOUT_SESSION_TTL,
    reship: {
      shipments: shipmentRecords,
      provider: shippingProvider,
      destinations: shippingDestinations,
      messages: workflow.messages,
    },
  });
  const queries = createOrderQueries(db, timeline);
  // INNGEST_DEV=1 means the dev server at its default address, never Inngest Cloud.
  const devServerUrl = inngestDevServerUrl(config);
  const runSource = endpoints.localEngineUrl
    ? createRunSource({ apiBase: endpoints.localEngineUrl, label: "the local engine", runUrlTemplate })
    : devServerUrl !== undefined
      ? createRunSource({ apiBase: devServerUrl, label: "the Inngest dev server", runUrlTemplate })
      : createRunSource({
          apiBase: config.INNGEST_BASE_URL ?? "https://api.inngest.com",
          ...(config.INNGEST_SIGNING_KEY ? { signingKey: config.INNGEST_SIGNING_KEY } : {}),
          label: "the Inngest REST API",
          runUrlTemplate,
        });
  const catalogCsv = createCatalogCsv(db, { lowStock });
  const pages = pagesRouter({
    logger,
    catalogCsv,
    actions,
    queries,
    reviews: createReviews({ db, timeline }),
    tracking: createParcelTracking(db),
    links,
    freshLinks: createFreshLinks({ db, sender, renderer }),
    adminToken: endpoints.adminToken,
    ...(endpoints.adminTokenFile ? { adminTokenFile: endpoints.adminTokenFile } : {}),
    sessions: createOpsSessions({
      adminToken: endpoints.adminToken,
      secure: publicUrl.startsWith("https:"),
      revocations: createDatabaseSessionRevocations(db),
    }),
    renderer,
    catalog,
    runs: runSource,
    alertBacklog: () => alertOutbox.backlog(),
    alertBannerAfterMs: durationMs(config.ALERT_BANNER_AFTER),
    reconciliation,
    webhooks: webhooks.endpoints,
    returns: returns.actions,
    openCheckoutUrl: checkoutPayUrl(stripe),
    addresses: createAddressCorrections({
      db,
      holds,
      timeline,
      verify: async (address) =>
        shippingProvider.verifyAddress ? shippingProvider.verifyAddress(address) : null,
    }),
    ...(config.SMTP_URL === undefined && !config.isProduction
      ? { outboxDirectory: path.resolve(config.DATA_DIR, "outbox") }
      : {}),
    brand,
  });

  const serveOptions = {
    client: inngest,
    functions: createFunctions(inngest, workflow),
    ...pinnedServeUrl(config),
  };

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
    shippingProvider,
    metrics,
    links,
    production: config.isProduction,
    ...(logoOrigin(brand) ? { logoOrigin: logoOrigin(brand) } : {}),
    reconciliation,
    lifecycleEvents,
    metricsRoute: metricsRoute(metrics, { token: config.METRICS_TOKEN }),
    adminRateLimit: adminRateLimit({
      limit: config.ADMIN_RATE_LIMIT,
      windowMs: 60_000,
      token: endpoints.adminToken,
    }),
    trustProxy: trustProxySetting(config.TRUST_PROXY),
    inngestServe: {
      path: config.INNGEST_SERVE_PATH,
      handler: inngestEndpoint({
        serve: serve({ ...serveOptions, enableUnauthedSync: false }),
        ...(config.INNGEST_ALLOW_UNSIGNED_SYNC
          ? { serveUnsignedSync: serve({ ...serveOptions, enableUnauthedSync: true }) }
          : {}),
        // serve() checks signatures in cloud mode only (the SDK's rule), so only then bound unsigned bodies.
        signaturesRequired: inngest.mode === "cloud",
        originPinned: serveOptions.serveOrigin !== undefined,
        logger,
      }),
    },
    carrierWebhook: carrierWebhookRouter({
      easyPostSecret: endpoints.easyPostWebhookSecret,
      shipments: shipmentRecords,
      logger,
      publish: (event) => publisher.publish(event),
      // Decision 0195: the order's delivery mark, done here rather than by a step of the run.
      markOrderDelivered: async (orderId, deliveredAt) => {
        if (await orders.transition(orderId, ["shipped"], "delivered"))
          await timeline.record(orderId, "delivered", { deliveredAt });
      },
      timeline,
      exceptions: createCarrierExceptions({
        flagForOps: (orderId, reason) => orders.flagForOps(orderId, reason),
        timeline,
        alerts,
        tellCustomer: (orderId, exception) => workflow.messages.deliveryException(orderId, exception),
      }),
      returnParcels: returns.tracking,
    }),
    returnsAdmin: returns.admin,
    webhooksAdmin: webhooks.admin,
    stripeWebhook: intake.stripeWebhook,
    checkout: intake.checkout,
    orderAdmin: orderAdminRoutes({ adminToken: endpoints.adminToken, actions, queries }),
    catalogAdmin: catalogAdminRoutes({
      adminToken: endpoints.adminToken,
      catalog,
      csv: catalogCsv,
    }),
    reconciliationAdmin: reconciliationAdminRoutes({ adminToken: endpoints.adminToken, reconciliation }),
    async close() {
      await lifecycleEvents.stop();
      alertOutbox.close();
      emailTransport.close?.();
      await db.$disconnect();
    },
  };
}

/** TRUST_PROXY as Express's "trust proxy" setting: a hop count, an address list, or off. */
function trustProxySetting(value: string | undefined): number | string | false {
  if (value === undefined) return false;
  return /^\d+$/.test(value) ? Number(value) : value;
}
