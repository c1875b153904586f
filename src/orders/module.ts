import type Stripe from "stripe";
import type { Alerter } from "../alerts";
import type { Config } from "../config";
import type { Database } from "../db/client";
import type { EventPublisher } from "../events/publisher";
import type { InventoryRepository } from "../inventory/inventory";
import type { Logger } from "../logger";
import type { Metrics } from "../metrics/metrics";
import type { CustomerMessages } from "../notifications/customer-messages";
import type { EmailRenderer } from "../notifications/email-renderer";
import type { EmailSender } from "../notifications/email-sender";
import { durationMs } from "../shared/duration";
import { publicBaseUrl, type ShipmentRepository, type ShippingProvider } from "../shipping";
import type { LabelVoids } from "../shipping/label-void";
import type { LiveRatePolicy, LiveRateQuoter } from "../shipping/live-rates";
import type { ShippingDestinations } from "../shipping/shipment-booking";
import type { Timeline } from "../timeline/timeline";
import { orderAdminRoutes } from "./admin-routes";
import { createAddressCorrections } from "./correct-address";
import { createFulfilmentRecords } from "./fulfilment-records";
import { createHolds } from "./hold-order";
import type { StripeIntakeDeps } from "./intake/stripe-intake";
import { createOrderActions } from "./order-actions";
import { createOrderIntake } from "./order-intake";
import { createOrderQueries } from "./order-queries";
import type { OrderRepository } from "./order-repository";
import { createOrderRedrive } from "./redrive-order";
import { createRefunds } from "./refund-order";
import { createReviews } from "./review-order";

type ExchangeRouting = NonNullable<StripeIntakeDeps["exchanges"]>;

/**
 * The orders, composed in their own folder: the Stripe intake and checkout, refunds, holds,
 * re-drives, the use cases both doors share (the admin API and the ops console), and /api/orders.
 */
export function createOrdersModule(shared: {
  config: Config;
  db: Database;
  stripe: Stripe;
  repository: OrderRepository;
  timeline: Timeline;
  publisher: EventPublisher;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
  metrics: Metrics;
  links: NonNullable<Parameters<typeof createOrderIntake>[0]["links"]>;
  inventory: InventoryRepository;
  shipping: {
    shipments: ShipmentRepository;
    provider: ShippingProvider;
    destinations: ShippingDestinations;
    labels: LabelVoids;
    /** CHECKOUT_LIVE_RATES (src/shipping/live-rates.ts); undefined when off. */
    liveRates?: { quoter: LiveRateQuoter; policy: LiveRatePolicy } | undefined;
  };
  notifications: { sender: EmailSender; renderer: EmailRenderer; messages: CustomerMessages };
  adminToken: string;
  webhookSecret: string;
}) {
  const { config, db, stripe, repository, timeline, publisher, alerts, logger, metrics } = shared;
  const { shipments, provider, destinations, labels } = shared.shipping;
  const { sender, renderer, messages } = shared.notifications;
  const onTransition = (to: Parameters<Metrics["observeOrderTransition"]>[0]) =>
    metrics.observeOrderTransition(to);
  const holds = createHolds({ db, publisher });
  // The returns' side of the Stripe webhook (an exchange's difference paid on Checkout), set once
  // the returns are built; the webhook serves nothing before the app is built.
  const exchangePayments: { events?: ExchangeRouting | undefined } = {};
  const refunds = createRefunds({
    db,
    stripe,
    sender,
    logger,
    onFullRefund: (orderId) => labels.voidLabel(orderId, "refunded").then(() => undefined),
    alerts,
  });
  const intake = createOrderIntake({
    db,
    stripe,
    refunds,
    exchanges: {
      owns: (event) => exchangePayments.events?.owns(event) ?? false,
      handle: (event) => {
        if (!exchangePayments.events) throw new Error("exchange payments are not wired");
        return exchangePayments.events.handle(event);
      },
    },
    voidLabel: (orderId) => labels.voidLabel(orderId, "refunded"),
    holds,
    inventory: shared.inventory,
    publisher,
    logger,
    alerts,
    webhookSecret: shared.webhookSecret,
    captureMethod: config.PAYMENT_CAPTURE,
    publicUrl: publicBaseUrl(config),
    links: shared.links,
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
    ...(shared.shipping.liveRates
      ? {
          liveRates: {
            ...shared.shipping.liveRates,
            itemWeightOz: config.SHIPPING_ITEM_WEIGHT_OZ,
            maxWeightOz: config.SHIPPING_MAX_PARCEL_WEIGHT_OZ,
            observe: (source, fallback) => metrics.observeCheckoutShippingQuote(source, fallback),
          },
        }
      : {}),
    pricing: {
      automaticTax: config.CHECKOUT_AUTOMATIC_TAX,
      taxBehavior: config.CHECKOUT_TAX_BEHAVIOR,
      defaultTaxCode: config.CHECKOUT_DEFAULT_TAX_CODE,
      allowPromotionCodes: config.CHECKOUT_ALLOW_PROMOTION_CODES,
    },
    sessionTtlMs: durationMs(config.CHECKOUT_SESSION_TTL),
    ...(config.CHECKOUT_API_TOKEN !== undefined ? { checkoutToken: config.CHECKOUT_API_TOKEN } : {}),
    metrics,
    onTransition,
  });
  const redrive = createOrderRedrive(db);
  // One object of use cases for both doors: the admin API and the ops console.
  const actions = createOrderActions({
    db,
    orders: repository,
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
    reship: { shipments, provider, destinations, messages },
  });
  const queries = createOrderQueries(db, timeline);
  return {
    holds,
    intake,
    refunds,
    redrive,
    fulfilment: createFulfilmentRecords(db, { onTransition }),
    actions,
    queries,
    reviews: createReviews({ db, timeline }),
    addresses: createAddressCorrections({
      db,
      holds,
      timeline,
      verify: async (address) => (provider.verifyAddress ? provider.verifyAddress(address) : null),
    }),
    admin: orderAdminRoutes({ adminToken: shared.adminToken, actions, queries }),
    /** Hands the Stripe webhook's exchange payments to the returns, once they are built. */
    routeExchangePayments(events: ExchangeRouting | undefined) {
      exchangePayments.events = events;
    },
    /** Decision 0195: the order's delivery mark, done by the carrier's webhook, not a step of the run. */
    async markDelivered(orderId: string, deliveredAt: string) {
      if (await repository.transition(orderId, ["shipped"], "delivered"))
        await timeline.record(orderId, "delivered", { deliveredAt });
    },
  };
}

export type OrdersModule = ReturnType<typeof createOrdersModule>;
