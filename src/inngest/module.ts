import { serve } from "inngest/express";
import type { Inngest } from "inngest";
import type { Config } from "../config";
import type { Database } from "../db/client";
import { createLifecycleEventsModule } from "../events/module";
import { webhookDeliveryEvents } from "../webhooks/dispatch";
import { inngestEndpoint } from "../http/inngest-endpoint";
import type { Logger } from "../logger";
import { customerDataScrubbing } from "./error-scrubbing";
import { customerDataEncryption } from "./encryption";
import { createInngestClient } from "./client";
import { createFunctions } from "./functions";
import { pinnedServeUrl } from "./serve-url";
import { createReturnWork } from "./steps/return-work";
import type { ReturnWorkDeps } from "../returns/return-work";
import type { Metrics } from "../metrics/metrics";
import { workflowObservability } from "../metrics/workflow-observability";
import { createCustomerDataLookup } from "../orders/customer-data";
import type { createRunFailures } from "../orders/run-failures";
import { durationMs } from "../shared/duration";
import type { AlertOutbox, Alerter } from "../alerts";
import type { InventoryModule } from "../inventory/module";
import type { NotificationsModule } from "../notifications/module";
import { disputeHoldOf } from "../orders/disputed-amount";
import type { OrdersModule } from "../orders/module";
import type { OrderRepository } from "../orders/order-repository";
import { createPaymentRepository } from "../payments/payment-repository";
import type { PaymentGateway } from "../payments/payment-gateway";
import type { Reconciliation } from "../reconciliation";
import { createRecoveryModule } from "../recovery/module";
import type { ShippingModule } from "../shipping/module";
import type { Timeline } from "../timeline/timeline";
import type Stripe from "stripe";
import type {
  ReturnWorkflowDependencies,
  WebhookWorkflowDependencies,
  WorkflowDependencies,
  WorkflowSettings,
} from "./dependencies";

type RunFailures = ReturnType<typeof createRunFailures>;

/** Where the local Inngest-compatible engine runs in place of Inngest, and the key it signs with. */
interface Engine {
  localEngineUrl?: string;
  localEngineSigningKey?: string;
}

/**
 * The workflow's Inngest client: metrics and a failed step's timeline entry (the ops console shows a
 * run's failed step with its attempts, and the "failed" filter finds a failed run from these
 * entries), the customer's data masked in errors, and the payload encryption when keyed. And the
 * shop's lifecycle events' outbox (src/events), sent by a client of their own.
 */
export function createInngestModule(shared: {
  config: Config;
  logger: Logger;
  db: Database;
  metrics: Metrics;
  engine: Engine & { databaseUrl: string };
  runFailures: Pick<RunFailures, "stepFailed">;
}) {
  const { config, logger, engine, runFailures } = shared;
  const recordStepFailure = (failure: Parameters<RunFailures["stepFailed"]>[0]) => {
    runFailures
      .stepFailed(failure)
      .catch((error: unknown) => logger.warn({ err: error, ...failure }, "could not record a failed step"));
  };
  const inngest = createInngestClient(config, {
    localEngineUrl: engine.localEngineUrl,
    localEngineSigningKey: engine.localEngineSigningKey,
    logger,
    middleware: [
      workflowObservability({ metrics: shared.metrics, logger, onFinalStepFailure: recordStepFailure }),
      // Errors go to Inngest in clear, encrypted or not: the customer's data is masked in them.
      customerDataScrubbing({ customerData: createCustomerDataLookup(shared.db) }),
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
  // The shop's lifecycle events, from their outbox: a client of their own, unencrypted (module.ts).
  const lifecycleClient = createInngestClient(config, {
    localEngineUrl: engine.localEngineUrl,
    localEngineSigningKey: engine.localEngineSigningKey,
    logger,
  });
  const lifecycleEvents = createLifecycleEventsModule({
    db: shared.db,
    databaseUrl: engine.databaseUrl,
    sink: { send: (events) => lifecycleClient.send(events) },
    logger,
    companions: webhookDeliveryEvents,
  });
  return { inngest, lifecycleEvents };
}

/** The workflow's settings, from the configuration. */
export function workflowSettings(config: Config): WorkflowSettings {
  return {
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
  };
}

/** Everything the Inngest functions touch, picked from the domain modules. */
export function createWorkflowDependencies(modules: {
  config: Config;
  db: Database;
  stripe: Stripe;
  timeline: Timeline;
  orders: OrderRepository;
  payments: PaymentGateway;
  alerts: Alerter;
  alertOutbox: AlertOutbox;
  notifications: Pick<NotificationsModule, "messages" | "delivery">;
  shipping: Pick<ShippingModule, "booking" | "labels">;
  inventory: Pick<InventoryModule, "reserving" | "lowStock" | "stockLedger">;
  ordersModule: Pick<OrdersModule, "fulfilment" | "holds" | "redrive" | "intake">;
  reconciliation: Reconciliation;
  /** The returns' workflow side, with what their steps work with (src/returns/module.ts). */
  returns: (Omit<ReturnWorkflowDependencies, "work"> & { workDeps: ReturnWorkDeps }) | undefined;
  /** Signed outbound webhooks' attempts (src/webhooks/module.ts). */
  webhooks: WebhookWorkflowDependencies;
}): WorkflowDependencies {
  const { db, ordersModule, shipping, inventory, notifications } = modules;
  return {
    orders: modules.orders,
    fulfilment: ordersModule.fulfilment,
    timeline: modules.timeline,
    // Reserve converts the checkout's stock hold; see src/inventory/holding-inventory.ts.
    inventory: inventory.reserving,
    payments: modules.payments,
    paymentRecords: createPaymentRepository(db),
    disputes: { holdOf: (orderId) => disputeHoldOf(db, orderId) },
    shipments: shipping.booking,
    labels: shipping.labels,
    holds: ordersModule.holds,
    messages: notifications.messages,
    emailOutbox: notifications.delivery,
    alerts: modules.alerts,
    alertOutbox: modules.alertOutbox,
    lowStock: inventory.lowStock,
    stockLedger: inventory.stockLedger,
    settings: workflowSettings(modules.config),
    recovery: {
      ...createRecoveryModule(db, modules.stripe),
      intake: ordersModule.intake.intake,
      redrive: ordersModule.redrive,
      checkouts: ordersModule.intake.checkoutSweep,
      reconciliation: modules.reconciliation,
    },
    ...(modules.returns ? { returns: returnWorkflow(modules.returns) } : {}),
    webhooks: modules.webhooks,
  };
}

/** process-return's dependencies: the work of its step files (src/inngest/steps), on the returns' ports. */
function returnWorkflow({
  workDeps,
  ...settings
}: Omit<ReturnWorkflowDependencies, "work"> & { workDeps: ReturnWorkDeps }): ReturnWorkflowDependencies {
  return { ...settings, work: createReturnWork(workDeps) };
}

/** Inngest's serve() behind src/http/inngest-endpoint.ts, at INNGEST_SERVE_PATH. */
export function inngestServe(
  config: Config,
  inngest: Inngest,
  workflow: WorkflowDependencies,
  logger: Logger,
) {
  const serveOptions = {
    client: inngest,
    functions: createFunctions(inngest, workflow),
    ...pinnedServeUrl(config),
  };
  return {
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
  };
}
