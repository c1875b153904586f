import type { Router } from "express";
import type Stripe from "stripe";
import type { Database } from "../db/client";
import type { OrderStatus } from "../generated/prisma/enums";
import type { EventPublisher } from "../events/publisher";
import { stockLowEvent } from "../events/contracts";
import type { InventoryRepository } from "../inventory/inventory";
import type { Logger } from "../logger";
import { createStripeCheckoutSessions, type ShippingCollection } from "../payments/stripe-checkout";
import { createCheckoutRepository } from "./checkout/checkout-repository";
import { checkoutRoutes } from "./checkout/checkout-routes";
import {
  createCheckoutService,
  type CheckoutServiceLiveRates,
  type CheckoutServiceShippingRates,
} from "./checkout/checkout-service";
import type { CheckoutPricingSettings } from "./checkout/pricing-terms";
import { createCheckoutSweep, type CheckoutSweep } from "./checkout/checkout-sweep";
import { createStockHolds } from "../inventory/stock-holds";
import type { Alerter } from "../alerts";
import { checkoutFactsOf, type CheckoutFacts } from "./intake/stripe-event-plan";
import { breakdownExpansions } from "../payments/money-breakdown";
import { createIntakeRepository } from "./intake/intake-repository";
import { createStripeIntake, type StripeIntake, type StripeIntakeDeps } from "./intake/stripe-intake";
import { createRefundEvents } from "./intake/refund-events";
import { createRiskEvents } from "./intake/risk-events";
import type { Holds } from "./hold-order";
import { createOrderRepository } from "./order-repository";
import { createTimeline } from "../timeline/timeline";
import {
  stripeWebhookEndpoint,
  type StripeWebhookEndpoint,
  type WebhookObserver,
} from "./intake/stripe-webhook-route";

/** CHECKOUT_SESSION_TTL's default, 1 hour. */
const defaultSessionTtlMs = 3600_000;

export interface OrderIntake {
  /** POST /api/stripe/webhook, for buildApp (src/app.ts): it reads the raw body. */
  stripeWebhook: StripeWebhookEndpoint;
  /** GET /api/products, POST /api/checkout: mount after express.json(). */
  checkout: Router;
  intake: StripeIntake;
  /** Half-made checkouts and stale holds, for the sweep-stale-checkouts cron. */
  checkoutSweep: CheckoutSweep;
}

/** Builds the Stripe side of the order intake: catalog, checkout and the webhook receiver. */
export function createOrderIntake(deps: {
  db: Database;
  stripe: Stripe;
  inventory: InventoryRepository;
  publisher: EventPublisher;
  logger: Logger;
  /** Ops hear about payments that do not match their order. */
  alerts: Pick<Alerter, "notify">;
  webhookSecret: string;
  captureMethod: "manual" | "automatic";
  publicUrl: string;
  links?: { checkoutSuccess(): string; checkoutCancelled(orderId: string): string };
  shipping?: ShippingCollection;
  /** SHIPPING_RATE_TABLE with the parcel plan's weights: shipping options charged at Checkout. */
  shippingRates?: CheckoutServiceShippingRates;
  /** CHECKOUT_LIVE_RATES: the carrier's live rates at checkout, the table their fallback. */
  liveRates?: CheckoutServiceLiveRates;
  /** CHECKOUT_AUTOMATIC_TAX and the other CHECKOUT_* tax and code settings (decision 0204). */
  pricing?: CheckoutPricingSettings;
  /** CHECKOUT_SESSION_TTL in milliseconds: how long a session can be paid and its stock held. */
  sessionTtlMs?: number;
  /** Hands a bought label back to the carrier (src/shipping/label-void.ts), for a full refund at Stripe. */
  voidLabel?: (orderId: string) => Promise<unknown>;
  /** The fulfilment hold, for disputes and Radar reviews. */
  holds?: Pick<Holds, "placeHold" | "releaseHold">;
  metrics?: WebhookObserver;
  onTransition?: (to: OrderStatus) => void;
  /** Checkout Sessions paying a return's exchange difference, handed to the returns. */
  exchanges?: StripeIntakeDeps["exchanges"];
  /** CHECKOUT_API_TOKEN: when set, POST /api/checkout needs it as a bearer token. */
  checkoutToken?: string;
}): OrderIntake {
  const holds = createStockHolds(deps.db);
  const checkoutRepository = createCheckoutRepository(deps.db);
  const sessions = createStripeCheckoutSessions(deps.stripe, { captureMethod: deps.captureMethod });
  const intake = createStripeIntake({
    repository: createIntakeRepository(deps.db),
    lookupCheckout: (id) => lookupCheckout(deps.stripe, id),
    holds,
    alerts: deps.alerts,
    publisher: deps.publisher,
    logger: deps.logger,
    ...(deps.onTransition ? { onTransition: deps.onTransition } : {}),
    ...(deps.exchanges ? { exchanges: deps.exchanges } : {}),
    refunds: createRefundEvents({
      db: deps.db,
      stripe: deps.stripe,
      orders: createOrderRepository(deps.db),
      publisher: deps.publisher,
      timeline: createTimeline(deps.db),
      alerts: deps.alerts,
      logger: deps.logger,
      ...(deps.voidLabel ? { voidLabel: deps.voidLabel } : {}),
    }),
    ...(deps.holds
      ? {
          risks: createRiskEvents({
            db: deps.db,
            stripe: deps.stripe,
            holds: deps.holds,
            timeline: createTimeline(deps.db),
            alerts: deps.alerts,
            logger: deps.logger,
          }),
        }
      : {}),
  });
  const checkout = createCheckoutService({
    inventory: deps.inventory,
    orders: checkoutRepository,
    sessions,
    publicUrl: deps.publicUrl.replace(/\/+$/, ""),
    ...(deps.links ? { links: deps.links } : {}),
    sessionTtlMs: deps.sessionTtlMs ?? defaultSessionTtlMs,
    logger: deps.logger,
    ...(deps.shipping ? { shipping: deps.shipping } : {}),
    ...(deps.shippingRates ? { shippingRates: deps.shippingRates } : {}),
    ...(deps.liveRates ? { liveRates: deps.liveRates } : {}),
    ...(deps.pricing ? { pricing: deps.pricing } : {}),
    onLowStock: (skus, orderId) => deps.publisher.publish(stockLowEvent({ skus }, orderId)),
  });
  return {
    intake,
    checkoutSweep: createCheckoutSweep({
      orders: checkoutRepository,
      checkout,
      holds,
      sessions,
      logger: deps.logger,
    }),
    stripeWebhook: stripeWebhookEndpoint({
      intake,
      webhookSecret: deps.webhookSecret,
      logger: deps.logger,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    }),
    checkout: checkoutRoutes({
      inventory: deps.inventory,
      checkout,
      ...(deps.checkoutToken !== undefined ? { checkoutToken: deps.checkoutToken } : {}),
    }),
  };
}

/**
 * Stripe's record of a Checkout Session for the intake: one retrieve with the PaymentIntent, the
 * line items (with their products, which carry our SKU) and the chosen shipping rate expanded, so
 * the money breakdown is read from Stripe once. Line items past the expanded list's first page
 * are listed (rarely: a cart of many lines).
 */
async function lookupCheckout(stripe: Stripe, id: string): Promise<CheckoutFacts> {
  const session = await stripe.checkout.sessions.retrieve(id, {
    expand: ["payment_intent", ...breakdownExpansions],
  });
  if (!session.line_items?.has_more) return checkoutFactsOf(session);
  const lineItems = await stripe.checkout.sessions
    .listLineItems(id, { limit: 100, expand: ["data.price.product"] })
    .autoPagingToArray({ limit: 10_000 });
  return checkoutFactsOf(session, lineItems);
}
