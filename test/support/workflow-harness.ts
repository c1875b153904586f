import http from "node:http";
import type { AddressInfo } from "node:net";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import {
  createEngineClock,
  createLocalEngine,
  type EngineClock,
  type LocalEngine,
  type LocalEngineOptions,
} from "../../src/dev/inngest-engine";
import { createStripeSandbox, type StripeSandbox } from "../../src/dev/stripe-sandbox";
import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import { fulfilmentKey, orderPlaced, orderPlacedEventId } from "../../src/events/contracts";
import { createLogger, type Logger } from "../../src/logger";
import { createServices, type Services } from "../../src/wiring";
import { breakdownExpansions, breakdownOf } from "../../src/payments/money-breakdown";
import { createTestDatabase, type TestDatabase } from "./database";
import { engineCheckpointing } from "./env";
import { eventually } from "./eventually";
import { testEncryptionKey } from "./encryption";
import { runsOfEvent, type RunView } from "./engine-runs";
import { startSlackStandIn, type SlackStandIn } from "./slack-receiver";
import { startSmtpReceiver, type SmtpReceiver } from "./smtp-receiver";

export const adminToken = "test-admin-token-0123456789";
export const webhookSecret = "whsec_test_workflow_secret";
export const easyPostSecret = "test-easypost-webhook-secret-0123456789";

/** An address EasyPost's stand-in accepts: every order the harness makes ships here. */
export const testShippingAddress = {
  name: "Ada Lovelace",
  line1: "12 Analytical Row",
  city: "Portland",
  state: "OR",
  postalCode: "97201",
  country: "US",
};

/**
 * The whole service in one process, wired as in production but with stand-ins that speak the
 * real protocols: PostgreSQL (a database of its own), the Stripe sandbox driven by stripe-node,
 * a real SMTP server, a Slack receiver, and the local Inngest engine calling serve() over HTTP
 * on a frozen clock that tests move by hand.
 */
export class WorkflowHarness {
  services!: Services;
  engine!: LocalEngine;
  appUrl!: string;
  private appServer?: http.Server;
  /** EasyPost's stand-in, driven by @easypost/api: the carrier every run books with. */
  easyPost!: EasyPostSandbox;
  /** Every request the app received ("POST /api/..."): a test sees an action reach the service. */
  readonly requestsSeen: string[] = [];
  /** What start() built the services from, for restartService(). */
  private rebuild?: (env: Record<string, string>) => Promise<Services>;

  private constructor(
    readonly database: TestDatabase,
    readonly sandbox: StripeSandbox,
    readonly smtp: SmtpReceiver,
    readonly slack: SlackStandIn,
    readonly clock: EngineClock,
  ) {}

  /**
   * `serviceLogger` replaces the service's (silent) logger, e.g. to capture what the service logs;
   * the stand-ins keep a silent one. `smtpCredentials` go into SMTP_URL as production's would.
   */
  static async start(
    options: {
      env?: Record<string, string>;
      serviceLogger?: Logger;
      smtpCredentials?: { user: string; pass: string };
      /** Something between the app's Inngest client and the engine (e.g. checkpoint faults). */
      engineApi?: (engineUrl: string) => Promise<string>;
      /** Where the engine finds its database (e.g. through a proxy that can take it away). */
      engineDatabaseUrl?: (databaseUrl: string) => Promise<string>;
      /** The engine's own options (a logger to watch it, a shorter job lease). */
      engine?: Partial<LocalEngineOptions>;
    } = {},
  ): Promise<WorkflowHarness> {
    const logger = createLogger({ level: "silent" });
    const database = await createTestDatabase();
    const sandbox = createStripeSandbox({ webhookSecret, logger });
    const stripeUrl = (await sandbox.listen(0, "127.0.0.1")).url;
    const harness = new WorkflowHarness(
      database,
      sandbox,
      await startSmtpReceiver(),
      await startSlackStandIn(),
      createEngineClock({ timeScale: 0 }),
    );
    harness.engine = createLocalEngine({
      databaseUrl: options.engineDatabaseUrl ? await options.engineDatabaseUrl(database.url) : database.url,
      logger,
      clock: harness.clock,
      retryBackoff: () => 1_000,
      checkpointing: engineCheckpointing,
      ...options.engine,
    });
    const engineUrl = (await harness.engine.listen(0, "127.0.0.1")).url;
    harness.easyPost = createEasyPostSandbox({ webhookSecret: easyPostSecret, logger });
    await harness.easyPost.listen(0, "127.0.0.1");
    const easyPostEndpoints = {
      easyPost: { apiKey: "EZTK_test_workflow", apiBase: harness.easyPost.apiBase ?? "" },
      easyPostWebhookSecret: easyPostSecret,
    };

    const baseEnv = {
      NODE_ENV: "test",
      LOG_LEVEL: "silent",
      PUBLIC_URL: "http://shop.test",
      SMTP_URL: withCredentials(harness.smtp.url, options.smtpCredentials),
      EMAIL_FROM: "Shop <orders@shop.example>",
      SLACK_WEBHOOK_URL: harness.slack.url,
      // Each alert goes at once: these tests look at one alert at a time (grouping: test/alerts).
      ALERT_GROUP_WINDOW: "0s",
      INNGEST_RUN_URL_TEMPLATE: `${engineUrl}/run?runID={runId}`,
      INNGEST_ENCRYPTION_KEY: testEncryptionKey,
      ...options.env,
    };
    const config = parseConfig(baseEnv);
    harness.rebuild = (env) =>
      createServices({
        config: parseConfig({ ...baseEnv, ...env }),
        logger: options.serviceLogger ?? logger,
        endpoints: {
          databaseUrl: database.url,
          stripeSecretKey: "sk_test_workflow",
          stripeApiBase: stripeUrl,
          stripeWebhookSecret: webhookSecret,
          localEngineUrl: engineUrl,
          adminToken,
          ...easyPostEndpoints,
        },
      });
    harness.services = await createServices({
      config,
      logger: options.serviceLogger ?? logger,
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_workflow",
        stripeApiBase: stripeUrl,
        stripeWebhookSecret: webhookSecret,
        localEngineUrl: options.engineApi ? await options.engineApi(engineUrl) : engineUrl,
        adminToken,
        ...easyPostEndpoints,
      },
    });
    harness.appServer = http.createServer(buildApp(harness.services));
    harness.appServer.prependListener("request", (req: http.IncomingMessage) =>
      harness.requestsSeen.push(`${req.method ?? ""} ${req.url ?? ""}`),
    );
    await new Promise<void>((resolve) => harness.appServer?.listen(0, "127.0.0.1", resolve));
    harness.appUrl = `http://127.0.0.1:${(harness.appServer.address() as AddressInfo).port}`;
    await harness.engine.sync(`${harness.appUrl}${config.INNGEST_SERVE_PATH}`);
    harness.easyPost.setWebhookUrl(`${harness.appUrl}/api/carrier/webhook`);
    return harness;
  }

  get db() {
    return this.services.db;
  }

  async addProduct(sku: string, stockOnHand: number, unitPrice = 2500): Promise<void> {
    await this.db.product.create({
      data: {
        sku,
        name: `Product ${sku}`,
        unitPrice,
        currency: "usd",
        stockOnHand,
        // Received like real stock, so the ledger check (check-stock-ledger) finds it balanced.
        movements: {
          create: { delta: stockOnHand, reason: "received", actor: "test", stockAfter: stockOnHand },
        },
      },
    });
  }

  /**
   * An order as the intake leaves it once Stripe reports the money authorized (or paid): a real
   * Checkout Session in the sandbox, completed by the "customer", and the order row pointing at
   * its PaymentIntent.
   */
  async createPaidOrder(options: {
    customerId?: string;
    items: { sku: string; quantity: number }[];
    outcome?: "authorized" | "paid";
    /**
     * Checkout charges more than the lines: a percent-off coupon, a paid shipping option and
     * Stripe Tax (at a New York address, where the stand-in taxes goods and shipping); the order
     * then records Stripe's breakdown and total as the intake does (src/payments/money-breakdown.ts).
     */
    money?: {
      percentOff?: number;
      /** `metadata` on the option's rate: `carrier`/`service` name the label's service (rate table's carrierService). */
      shipping?: { amount: number; displayName: string; metadata?: Record<string, string> };
      tax?: boolean;
    };
  }): Promise<{ orderId: string; paymentIntentId: string }> {
    const products = await this.db.product.findMany({
      where: { sku: { in: options.items.map((i) => i.sku) } },
    });
    const lines = options.items.map((item) => {
      const product = products.find((p) => p.sku === item.sku);
      if (!product) throw new Error(`unknown sku ${item.sku}`);
      return { sku: item.sku, name: product.name, unitPrice: product.unitPrice, quantity: item.quantity };
    });
    const total = lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
    const order = await this.db.order.create({
      data: {
        customerId: options.customerId ?? "cus_workflow",
        email: "buyer@example.com",
        currency: "usd",
        total,
        shippingAddress: testShippingAddress,
        lines: { create: lines },
      },
    });
    const outcome = options.outcome ?? "authorized";
    const stripe = this.services.stripe;
    const money = options.money;
    const coupon =
      money?.percentOff !== undefined
        ? await stripe.coupons.create({ percent_off: money.percentOff, duration: "once" })
        : undefined;
    const session = await stripe.checkout.sessions.create({
      mode: "payment",
      client_reference_id: order.id,
      // As checkout makes them: the intake checks that session and PaymentIntent name the order.
      metadata: { orderId: order.id, customerId: order.customerId },
      success_url: "http://shop.test/success",
      line_items: lines.map((line) => ({
        quantity: line.quantity,
        price_data: {
          currency: "usd",
          unit_amount: line.unitPrice,
          product_data: { name: line.name, metadata: { sku: line.sku } },
        },
      })),
      payment_intent_data: {
        capture_method: outcome === "authorized" ? "manual" : "automatic",
        metadata: { orderId: order.id, customerId: order.customerId },
      },
      ...(coupon ? { discounts: [{ coupon: coupon.id }] } : {}),
      ...(money?.shipping
        ? {
            shipping_address_collection: { allowed_countries: ["US"] },
            shipping_options: [
              {
                shipping_rate_data: {
                  type: "fixed_amount",
                  display_name: money.shipping.displayName,
                  fixed_amount: { amount: money.shipping.amount, currency: "usd" },
                  metadata: { rateId: "express", ...money.shipping.metadata },
                },
              },
            ],
          }
        : {}),
      ...(money?.tax ? { automatic_tax: { enabled: true } } : {}),
    });
    const completed = await this.sandbox.completeCheckoutSession(session.id, outcome, {
      deliver: false,
      ...(money?.shipping
        ? {
            shipping: {
              name: "Ada Lovelace",
              address: {
                line1: "1 Main St",
                city: "New York",
                state: "NY",
                postal_code: "10001",
                country: "US",
              },
            },
          }
        : {}),
    });
    const paymentIntentId = completed.paymentIntent?.id;
    if (!paymentIntentId) throw new Error("the sandbox created no PaymentIntent");
    await this.db.order.update({
      where: { id: order.id },
      data: {
        status: outcome,
        checkoutSessionId: session.id,
        paymentIntentId,
        placedEventSentAt: new Date(),
      },
    });
    if (money) {
      // As the intake records it: Stripe's breakdown once, and Stripe's total as the order's.
      const breakdown = breakdownOf(
        await stripe.checkout.sessions.retrieve(session.id, { expand: [...breakdownExpansions] }),
      );
      if (!breakdown) throw new Error("the sandbox's session has no breakdown");
      await this.db.order.update({
        where: { id: order.id },
        data: { total: breakdown.total, moneyBreakdown: JSON.parse(JSON.stringify(breakdown)) },
      });
    }
    return { orderId: order.id, paymentIntentId };
  }

  /**
   * An order placed through POST /api/checkout (so its stock is held, as every real order's is),
   * paid in the sandbox and recorded as the intake records it, but not announced: the caller
   * sends shop/order.placed (placeOrder) when it wants the run to start.
   */
  async checkoutPaidOrder(options: {
    customerId: string;
    items: { sku: string; quantity: number }[];
  }): Promise<{ orderId: string; paymentIntentId: string }> {
    const res = await fetch(`${this.appUrl}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: options.customerId,
        email: "buyer@example.com",
        items: options.items,
      }),
    });
    if (res.status !== 201) throw new Error(`checkout answered ${res.status}: ${await res.text()}`);
    const { orderId, checkoutSessionId } = (await res.json()) as {
      orderId: string;
      checkoutSessionId: string;
    };
    const completed = await this.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      deliver: false,
    });
    const paymentIntentId = completed.paymentIntent?.id;
    if (!paymentIntentId) throw new Error("the sandbox created no PaymentIntent");
    await this.db.order.update({
      where: { id: orderId },
      data: {
        status: "authorized",
        paymentIntentId,
        placedEventSentAt: new Date(),
        // Checkout collects the address at Stripe; these orders skip that page.
        shippingAddress: testShippingAddress,
      },
    });
    return { orderId, paymentIntentId };
  }

  /** Emits shop/order.placed the way the webhook intake does. */
  async placeOrder(orderId: string): Promise<string> {
    const order = await this.db.order.findUniqueOrThrow({ where: { id: orderId } });
    const event = orderPlaced.create({
      orderId,
      customerId: order.customerId,
      email: order.email,
      total: order.total,
      currency: order.currency,
      paymentIntentId: order.paymentIntentId,
      fulfilmentKey: fulfilmentKey(orderId, order.redriveGeneration),
    });
    const eventId = orderPlacedEventId(orderId, order.redriveGeneration);
    await this.services.publisher.publish({ name: event.name, data: event.data, id: eventId });
    return eventId;
  }

  async send(name: string, data: Record<string, unknown>, id?: string): Promise<void> {
    await this.services.inngest.send({ name, data, ...(id ? { id } : {}) });
  }

  runsOfEvent(eventId: string): Promise<RunView[]> {
    return runsOfEvent(this.engineUrlOf(), eventId);
  }

  async run(
    runId: string,
  ): Promise<RunView & { steps?: { id: string; name: string | null; status: string }[] }> {
    const res = await fetch(`${this.engineUrlOf()}/v1/runs/${encodeURIComponent(runId)}`);
    return (
      (await res.json()) as {
        data: RunView & { steps?: { id: string; name: string | null; status: string }[] };
      }
    ).data;
  }

  /** Runs until nothing is runnable, moving the frozen clock past retry backoffs as it goes. */
  async settle(rounds = 12): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      await this.engine.drain();
      await this.engine.clock.advance(61_000);
    }
    await this.engine.drain();
  }

  /** The order with all it holds; `shipment` is parcel 1's current label (null: nothing booked). */
  async order(orderId: string) {
    const order = await this.db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: {
        payment: true,
        shipments: { orderBy: [{ parcelNumber: "asc" }, { generation: "asc" }] },
        emails: true,
        reservations: true,
        timeline: { orderBy: { id: "asc" } },
      },
    });
    return { ...order, shipment: order.shipments.find((s) => s.supersededAt === null) ?? null };
  }

  async stockOf(sku: string): Promise<number> {
    return (await this.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;
  }

  /** The admin API as ops call it: a GET without a body, a POST with one. */
  adminApi(path: string, body?: unknown): Promise<Response> {
    return fetch(`${this.appUrl}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  /** The refunds Stripe (the stand-in) holds for a payment, whoever made them. */
  async refundsAtStripe(paymentIntentId: string) {
    return (await this.services.stripe.refunds.list({ payment_intent: paymentIntentId, limit: 100 })).data;
  }

  /** The Slack messages ops were sent that match `pattern`. */
  alertsAbout(pattern: RegExp): string[] {
    return this.slack.bodies.map((body) => JSON.stringify(body)).filter((body) => pattern.test(body));
  }

  /** A paid order run through to `delivered`: placed, shipped, and delivered by the carrier's tracker. */
  async deliveredOrder(customerId: string, items: { sku: string; quantity: number }[]) {
    const { orderId, paymentIntentId } = await this.createPaidOrder({ customerId, items });
    await this.placeOrder(orderId);
    await this.settle(2);
    await this.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await this.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await this.settle(2);
    expect((await this.order(orderId)).status).toBe("delivered");
    return { orderId, paymentIntentId };
  }

  /**
   * Paid through `POST /api/checkout` and the stand-in's signed webhook (the card saved, as a dearer
   * exchange needs), then shipped and delivered; the order as it then is. Without a webhook URL set
   * at the stand-in, the missed-webhook sweep starts the order (webhookDeliveries is then 0).
   */
  async deliveredCheckoutOrder(customerId: string, items: { sku: string; quantity: number }[]) {
    const res = await fetch(`${this.appUrl}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ customerId, email: "buyer@example.com", items }),
    });
    expect(res.status).toBe(201);
    const { orderId, checkoutSessionId } = (await res.json()) as {
      orderId: string;
      checkoutSessionId: string;
    };
    const completed = await this.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    expect(completed.deliveries.every((d) => d.status === 200)).toBe(true);
    await eventually("shipped", async () => {
      await this.settle(1);
      return (await this.order(orderId)).status === "shipped";
    });
    await this.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await this.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await this.settle(2);
    const order = await this.order(orderId);
    expect(order.status).toBe("delivered");
    return {
      order,
      paymentIntentId: order.paymentIntentId as string,
      webhookDeliveries: completed.deliveries.length,
    };
  }

  /**
   * A return asked for through the admin API, its label bought, and its parcel delivered back to the
   * warehouse by the carrier's tracker; the return's id.
   */
  async returnDelivered(orderId: string, lines: { sku: string; quantity: number }[]): Promise<string> {
    const created = await this.adminApi(`/api/orders/${orderId}/returns`, {
      lines,
      reason: "no_longer_needed",
    });
    expect(created.status).toBe(201);
    const { returnId } = (await created.json()) as { returnId: string };
    await this.settle(3);
    const labelled = await this.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(labelled.status).toBe("approved");
    const trackingNumber = labelled.labelTrackingNumber as string;
    expect(trackingNumber).toBeTruthy();
    await this.easyPost.advanceTracker(trackingNumber, "in_transit");
    await this.easyPost.advanceTracker(trackingNumber, "delivered");
    await this.settle(3);
    return returnId;
  }

  stripeCalls(endpoint: string) {
    return this.sandbox.requests.filter((r) => r.endpoint === endpoint);
  }

  mailsTo(subjectPattern: RegExp) {
    return this.smtp.accepted.filter((mail) => subjectPattern.test(mail.subject ?? ""));
  }

  /** Every run of one of the app's functions (`shop-<id>`), as the engine's REST API lists them. */
  async runsOfFunction(functionId: string): Promise<RunView[]> {
    const res = await fetch(
      `${this.engineUrlOf()}/v1/runs?function_id=${encodeURIComponent(`shop-${functionId}`)}`,
    );
    return ((await res.json()) as { data: RunView[] }).data;
  }

  private engineUrlOf(): string {
    const template = this.services.config.INNGEST_RUN_URL_TEMPLATE ?? "";
    return new URL(template.replace("{runId}", "x")).origin;
  }

  /** A redeploy: new services from the start() environment plus `env`, on the same address. */
  async restartService(env: Record<string, string>): Promise<void> {
    if (!this.rebuild || !this.appServer) throw new Error("the harness has not started");
    const previous = this.services;
    this.services = await this.rebuild(env);
    this.appServer.removeAllListeners("request");
    this.appServer.on("request", buildApp(this.services));
    await previous.close();
    await this.engine.sync(`${this.appUrl}${this.services.config.INNGEST_SERVE_PATH}`);
  }

  async close(): Promise<void> {
    await this.engine.close();
    await new Promise<void>((resolve) => this.appServer?.close(() => resolve()) ?? resolve());
    await this.services.close();
    await this.sandbox.close();
    await this.easyPost.close();
    await this.smtp.close();
    await this.slack.close();
    await this.database.drop();
  }
}

function withCredentials(url: string, credentials?: { user: string; pass: string }): string {
  if (!credentials) return url;
  const withAuth = new URL(url);
  withAuth.username = credentials.user;
  withAuth.password = credentials.pass;
  return withAuth.toString();
}
