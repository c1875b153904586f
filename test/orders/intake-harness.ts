import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import Stripe from "stripe";
import type { OpsNotice } from "../../src/alerts";
import { buildApp } from "../../src/app";
import type { CheckoutSweep } from "../../src/orders/checkout/checkout-sweep";
import { parseConfig } from "../../src/config";
import { createStripeSandbox, type StripeSandbox } from "../../src/dev/stripe-sandbox";
import fixtures from "../../src/dev/stripe-sandbox/fixtures.json";
import type { Database } from "../../src/db/client";
import { createDatabaseReadiness } from "../../src/health/readiness";
import { createInngestClient } from "../../src/inngest/client";
import { createInngestPublisher } from "../../src/events/publisher";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import { createLogger, type Logger } from "../../src/logger";
import { createOrderIntake } from "../../src/orders/order-intake";
import type {
  CheckoutServiceLiveRates,
  CheckoutServiceShippingRates,
} from "../../src/orders/checkout/checkout-service";
import type { CheckoutPricingSettings } from "../../src/orders/checkout/pricing-terms";
import { createStripeClient } from "../../src/payments/stripe-client";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { startEventApiReceiver, type EventApiReceiver } from "../support/event-api-receiver";

export const webhookSecret = "whsec_intake_test_secret_0123456789";

/**
 * The intake as it runs in the service: buildApp() with the Stripe webhook and checkout routes,
 * stripe-node against the sandbox, a real Inngest client against a counting event API, and a
 * PostgreSQL database of its own.
 */
export class IntakeHarness {
  private constructor(
    readonly database: TestDatabase,
    readonly sandbox: StripeSandbox,
    readonly stripe: Stripe,
    readonly eventApi: EventApiReceiver,
    readonly server: Server,
    readonly url: string,
    readonly warnings: string[],
    private readonly logger: Logger,
    /** Every ops notice the intake raised, oldest first. */
    readonly alerts: OpsNotice[],
    /** The checkout sweep, run by hand here (a cron in the service). */
    readonly checkoutSweep: CheckoutSweep,
  ) {}

  private readonly extraServers: Server[] = [];

  static async start(
    options: {
      captureMethod?: "manual" | "automatic";
      sessionTtlMs?: number;
      shippingRates?: CheckoutServiceShippingRates;
      /** Live carrier rates at checkout (CHECKOUT_LIVE_RATES). */
      liveRates?: CheckoutServiceLiveRates;
      pricing?: CheckoutPricingSettings;
      /** What the service's Stripe client is made of the sandbox's (a test double around it, say). */
      serviceStripe?: (stripe: Stripe) => Stripe;
    } = {},
  ): Promise<IntakeHarness> {
    const warnings: string[] = [];
    const logger = createLogger({
      level: "warn",
      destination: { write: (line: string) => void warnings.push(line) },
    });
    const database = await createTestDatabase();
    await database.db.product.createMany({
      data: [
        { sku: "MUG", name: "Logo mug", unitPrice: 1200, currency: "usd", stockOnHand: 50 },
        { sku: "TEE", name: "Black T-shirt", unitPrice: 2500, currency: "usd", stockOnHand: 100 },
        { sku: "POSTER", name: "A2 poster", unitPrice: 1800, currency: "usd", stockOnHand: 3 },
        { sku: "EURO-BAG", name: "Tote bag", unitPrice: 900, currency: "eur", stockOnHand: 10 },
      ],
    });
    const sandbox = createStripeSandbox({ webhookSecret, logger });
    const stripe = createStripeClient({
      secretKey: "sk_test_intake",
      apiBase: (await sandbox.listen(0)).url,
    });
    const eventApi = await startEventApiReceiver();
    const alerts: OpsNotice[] = [];
    const instance = await startInstance({
      database,
      stripe: options.serviceStripe ? options.serviceStripe(stripe) : stripe,
      eventApi,
      logger,
      alerts,
      captureMethod: options.captureMethod ?? "manual",
      ...(options.sessionTtlMs !== undefined ? { sessionTtlMs: options.sessionTtlMs } : {}),
      ...(options.shippingRates ? { shippingRates: options.shippingRates } : {}),
      ...(options.liveRates ? { liveRates: options.liveRates } : {}),
      ...(options.pricing ? { pricing: options.pricing } : {}),
    });
    const server = instance.server;
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sandbox.setWebhookUrl(`${url}/api/stripe/webhook`);
    return new IntakeHarness(
      database,
      sandbox,
      stripe,
      eventApi,
      server,
      url,
      warnings,
      logger,
      alerts,
      instance.checkoutSweep,
    );
  }

  /**
   * Another instance of the service on the same database, Stripe and Inngest (a second replica,
   * or this one after a restart): it shares nothing in memory with the first.
   */
  async anotherInstance(): Promise<string> {
    return (await this.anotherInstanceWith({})).url;
  }

  /** anotherInstance configured otherwise (a configuration changed across a restart). */
  async anotherInstanceWith(options: {
    shippingRates?: CheckoutServiceShippingRates;
    pricing?: CheckoutPricingSettings;
  }): Promise<{ url: string; checkoutSweep: CheckoutSweep }> {
    const instance = await startInstance({
      database: this.database,
      stripe: this.stripe,
      eventApi: this.eventApi,
      logger: this.logger,
      alerts: this.alerts,
      captureMethod: "manual",
      ...options,
    });
    this.extraServers.push(instance.server);
    return { url: instance.url, checkoutSweep: instance.checkoutSweep };
  }

  get db() {
    return this.database.db;
  }

  async checkout(items: { sku: string; quantity: number }[], customerId = "cus-ada") {
    const res = await fetch(`${this.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ customerId, email: "ada@example.com", items }),
    });
    if (res.status !== 201) throw new Error(`checkout answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { orderId: string; checkoutSessionId: string; checkoutUrl: string };
  }

  /** POSTs a webhook body as Stripe would, signed by stripe-node unless a header is given. */
  async deliver(
    payload: string,
    options: { signature?: string | null; timestamp?: number; secret?: string; to?: string } = {},
  ) {
    const signature =
      options.signature === undefined
        ? Stripe.webhooks.generateTestHeaderString({
            payload,
            secret: options.secret ?? webhookSecret,
            ...(options.timestamp !== undefined ? { timestamp: options.timestamp } : {}),
          })
        : options.signature;
    const res = await fetch(`${options.to ?? this.url}/api/stripe/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(signature === null ? {} : { "stripe-signature": signature }),
      },
      body: payload,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  placedEvents(orderId: string) {
    return this.eventApi.accepted.filter(
      (event) => event.name === "shop/order.placed" && event.data.orderId === orderId,
    );
  }

  async order(orderId: string) {
    return this.db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: { lines: true, timeline: { orderBy: { id: "asc" } } },
    });
  }

  async close(): Promise<void> {
    for (const server of [this.server, ...this.extraServers]) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await this.sandbox.close();
    await this.eventApi.close();
    await this.database.drop();
  }
}

/** One instance of the service's intake and checkout; `db` overrides the test database's client. */
export async function startInstance(deps: {
  database: TestDatabase;
  db?: Database;
  stripe: Stripe;
  eventApi: EventApiReceiver;
  logger: Logger;
  alerts: OpsNotice[];
  captureMethod: "manual" | "automatic";
  sessionTtlMs?: number;
  shippingRates?: CheckoutServiceShippingRates;
  liveRates?: CheckoutServiceLiveRates;
  pricing?: CheckoutPricingSettings;
}): Promise<{ server: Server; url: string; checkoutSweep: CheckoutSweep }> {
  const { database, stripe, eventApi, logger } = deps;
  const inngest = createInngestClient(parseConfig({ NODE_ENV: "test" }), { localEngineUrl: eventApi.url });
  const db = deps.db ?? database.db;
  const intake = createOrderIntake({
    db,
    stripe,
    inventory: createPrismaInventoryRepository(db),
    publisher: createInngestPublisher(inngest),
    logger,
    alerts: {
      notify: async (notice) => {
        deps.alerts.push(notice);
      },
    },
    webhookSecret,
    captureMethod: deps.captureMethod,
    publicUrl: "http://shop.test",
    shipping: { allowedCountries: ["US", "CA"], collectPhone: true },
    ...(deps.sessionTtlMs !== undefined ? { sessionTtlMs: deps.sessionTtlMs } : {}),
    ...(deps.shippingRates ? { shippingRates: deps.shippingRates } : {}),
    ...(deps.liveRates ? { liveRates: deps.liveRates } : {}),
    ...(deps.pricing ? { pricing: deps.pricing } : {}),
  });
  const app = buildApp({
    logger,
    readiness: await createDatabaseReadiness(db),
    stripeWebhook: intake.stripeWebhook,
    checkout: intake.checkout,
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
  });
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    checkoutSweep: intake.checkoutSweep,
  };
}

/** A Stripe event built from Stripe's own fixtures (src/dev/stripe-sandbox/fixtures.json). */
export function fixtureEvent(type: string, object: object): Stripe.Event {
  return {
    ...structuredClone(fixtures.resources.event),
    id: `evt_test_${randomBytes(12).toString("hex")}`,
    created: Math.floor(Date.now() / 1000),
    type,
    data: { object },
  } as unknown as Stripe.Event;
}

export function fixtureSession(overrides: Partial<Stripe.Checkout.Session>): Stripe.Checkout.Session {
  return {
    ...structuredClone(fixtures.resources["checkout.session"]),
    ...overrides,
  } as unknown as Stripe.Checkout.Session;
}

export function fixturePaymentIntent(overrides: Partial<Stripe.PaymentIntent>): Stripe.PaymentIntent {
  return {
    ...structuredClone(fixtures.resources.payment_intent),
    ...overrides,
  } as unknown as Stripe.PaymentIntent;
}

/** Stripe sends pretty-printed JSON. */
export const payloadOf = (event: Stripe.Event): string => JSON.stringify(event, null, 2);
