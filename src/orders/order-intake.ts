import type { Router } from "express";
import type Stripe from "stripe";
import type { Database } from "../db/client";
import type { OrderStatus } from "../generated/prisma/enums";
import type { EventPublisher } from "../inngest/publisher";
import type { InventoryRepository } from "../inventory/inventory";
import type { Logger } from "../logger";
import { createStripeCheckoutSessions } from "../payments/stripe-checkout";
import { createCheckoutRepository } from "./checkout/checkout-repository";
import { checkoutRoutes } from "./checkout/checkout-routes";
import { createCheckoutService } from "./checkout/checkout-service";
import { createIntakeRepository } from "./intake/intake-repository";
import { createStripeIntake, type StripeIntake } from "./intake/stripe-intake";
import { stripeWebhookRouter, type WebhookObserver } from "./intake/stripe-webhook-route";

export interface OrderIntake {
  /** POST /api/stripe/webhook: mount before any JSON body parser (it reads the raw body). */
  stripeWebhook: Router;
  /** GET /api/products, POST /api/checkout: mount after express.json(). */
  checkout: Router;
  intake: StripeIntake;
}

/** Builds the Stripe side of the order intake: catalog, checkout and the webhook receiver. */
export function createOrderIntake(deps: {
  db: Database;
  stripe: Stripe;
  inventory: InventoryRepository;
  publisher: EventPublisher;
  logger: Logger;
  webhookSecret: string;
  captureMethod: "manual" | "automatic";
  publicUrl: string;
  links?: { checkoutSuccess(): string; checkoutCancelled(orderId: string): string };
  metrics?: WebhookObserver;
  onTransition?: (to: OrderStatus) => void;
}): OrderIntake {
  const intake = createStripeIntake({
    repository: createIntakeRepository(deps.db),
    lookupPaymentIntent: async (id) => (await deps.stripe.paymentIntents.retrieve(id)).status,
    publisher: deps.publisher,
    logger: deps.logger,
    ...(deps.onTransition ? { onTransition: deps.onTransition } : {}),
  });
  const checkout = createCheckoutService({
    inventory: deps.inventory,
    orders: createCheckoutRepository(deps.db),
    sessions: createStripeCheckoutSessions(deps.stripe, { captureMethod: deps.captureMethod }),
    publicUrl: deps.publicUrl.replace(/\/+$/, ""),
    ...(deps.links ? { links: deps.links } : {}),
    logger: deps.logger,
  });
  return {
    intake,
    stripeWebhook: stripeWebhookRouter({
      intake,
      webhookSecret: deps.webhookSecret,
      logger: deps.logger,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    }),
    checkout: checkoutRoutes({ inventory: deps.inventory, checkout }),
  };
}
