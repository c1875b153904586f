import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import Stripe from "stripe";
import {
  createEngineClock,
  createLocalEngine,
  type EngineClock,
  type LocalEngine,
} from "../../src/dev/inngest-engine";
import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import { createStripeSandbox, type StripeSandbox } from "../../src/dev/stripe-sandbox";
import { createStockLedger } from "../../src/inventory/stock-ledger";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { engineCheckpointing } from "../support/env";
import { testEncryptionKey } from "../support/encryption";
import { runsOfEvent, type RunView } from "../support/engine-runs";
import { startServeProxy, type ServeProxy } from "../support/serve-proxy";
import { startServer, type ServerProcess } from "../support/server-process";
import { startSlackStandIn, type SlackStandIn } from "../support/slack-receiver";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver";

export const adminToken = "e2e-admin-token-0123456789";
export const easyPostWebhookSecret = "e2e-easypost-webhook-secret-0123456789";
const webhookSecret = "whsec_e2e_secret_0123456789";

/**
 * The service as production runs it: `src/server.ts`, the production entry point, in a child process (killable, restartable), with
 * the local Inngest engine, the Stripe sandbox, an SMTP server and a Slack receiver in the test
 * process, all on loopback ports chosen by the OS, and a PostgreSQL database of its own.
 */
export class E2eHarness {
  app!: ServerProcess;
  engineUrl!: string;
  /** Set with `observeCalls`: every engine -> serve() call, timed. */
  proxy?: ServeProxy;
  private appPort = 0;
  private proxyHoldUntilArrived?: string[];
  private baseEnv: Record<string, string> = {};
  /** The carrier: EasyPost's stand-in, driven by the app through the official library. */
  easyPost!: EasyPostSandbox;

  private constructor(
    readonly database: TestDatabase,
    readonly engine: LocalEngine,
    readonly clock: EngineClock,
    readonly sandbox: StripeSandbox,
    readonly stripeUrl: string,
    readonly smtp: SmtpReceiver,
    readonly slack: SlackStandIn,
  ) {}

  static async start(
    options: { env?: Record<string, string>; observeCalls?: { holdUntilArrived: string[] } } = {},
  ): Promise<E2eHarness> {
    const logger = pino({ level: "silent" });
    const database = await createTestDatabase();
    const clock = createEngineClock({ timeScale: 1 });
    const engine = createLocalEngine({
      databaseUrl: database.url,
      logger,
      clock,
      retryBackoff: () => 200,
      pollIntervalMs: 100,
      checkpointing: engineCheckpointing,
    });
    // Like Stripe, redeliver a webhook the app did not acknowledge (it may be restarting). The
    // schedule outlasts four restarts of about 4-5 s each on a loaded machine (the crash test).
    const sandbox = createStripeSandbox({
      webhookSecret,
      logger,
      retryDelaysMs: [250, 500, 1000, 2000, 4000, 8000, 16000, 32000],
    });
    const stripeUrl = (await sandbox.listen(0, "127.0.0.1")).url;
    const harness = new E2eHarness(
      database,
      engine,
      clock,
      sandbox,
      stripeUrl,
      await startSmtpReceiver(),
      await startSlackStandIn(),
    );
    harness.engineUrl = (await engine.listen(0, "127.0.0.1")).url;
    harness.easyPost = createEasyPostSandbox({ webhookSecret: easyPostWebhookSecret, logger });
    await harness.easyPost.listen(0, "127.0.0.1");
    harness.baseEnv = options.env ?? {};
    harness.proxyHoldUntilArrived = options.observeCalls?.holdUntilArrived;
    await harness.startApp();
    return harness;
  }

  /** Starts (or restarts, on the same port) the app process and lets the engine sync it. */
  async startApp(extraEnv: Record<string, string> = {}): Promise<void> {
    this.app = await startServer(
      {
        NODE_ENV: "test",
        // server-process.ts learns the port from the info-level "listening" line.
        LOG_LEVEL: "info",
        PORT: String(this.appPort),
        DATABASE_URL: this.database.url,
        STRIPE_SECRET_KEY: "sk_test_e2e",
        STRIPE_API_BASE: this.stripeUrl,
        STRIPE_WEBHOOK_SECRET: webhookSecret,
        INNGEST_DEV: this.engineUrl,
        SMTP_URL: this.smtp.url,
        SLACK_WEBHOOK_URL: this.slack.url,
        // Each alert goes at once: these tests look at one alert at a time (grouping: test/alerts).
        ALERT_GROUP_WINDOW: "0s",
        ADMIN_API_TOKEN: adminToken,
        EASYPOST_API_KEY: "EZTK_e2e",
        EASYPOST_API_BASE: this.easyPost.apiBase as string,
        EASYPOST_WEBHOOK_SECRET: easyPostWebhookSecret,
        PUBLIC_URL: "http://shop.test",
        ...this.baseEnv,
        INNGEST_ENCRYPTION_KEY: testEncryptionKey,
        ...extraEnv,
      },
      30_000,
      "production",
    );
    this.easyPost.setWebhookUrl(`${this.app.url}/api/carrier/webhook`);
    this.appPort = this.app.port;
    this.sandbox.setWebhookUrl(`${this.app.url}/api/stripe/webhook`);
    if (this.proxyHoldUntilArrived !== undefined && !this.proxy) {
      this.proxy = await startServeProxy(`${this.app.url}/api/inngest`, {
        holdUntilArrived: this.proxyHoldUntilArrived,
      });
    }
    // Out-of-band (the dev server's way) unless a proxy sits in front: the app announces its own
    // address out-of-band, so the proxy's URL is synced in-band (Inngest Cloud's way).
    if (this.proxy) await this.engine.sync(this.proxy.url, "in-band");
    else await this.engine.sync(`${this.app.url}/api/inngest`);
  }

  get db() {
    return this.database.db;
  }

  stripe(): Stripe {
    return new Stripe("sk_test_e2e", {
      host: "127.0.0.1",
      port: Number(new URL(this.stripeUrl).port),
      protocol: "http",
    });
  }

  /** A product whose stock arrived through the ledger, as the catalog receives it (the reconciliation checks). */
  async addProduct(sku: string, stockOnHand: number, unitPrice = 2000): Promise<void> {
    await this.db.product.create({
      data: { sku, name: `Product ${sku}`, unitPrice, currency: "usd", stockOnHand: 0 },
    });
    if (stockOnHand > 0)
      await createStockLedger(this.db).record({
        sku,
        delta: stockOnHand,
        reason: "received",
        actor: "e2e-harness",
      });
  }

  /**
   * A customer's checkout through our API; returns the order and its Checkout Session. Like a
   * well-behaved client it retries a 503 (busy) after Retry-After, with the same Idempotency-Key.
   */
  async checkout(customerId: string, items: { sku: string; quantity: number }[]) {
    const key = randomUUID();
    let res: Response;
    for (let attempt = 1; ; attempt++) {
      res = await fetch(`${this.app.url}/api/checkout`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ customerId, email: `${customerId}@example.com`, items }),
      });
      if (res.status !== 503 || attempt === 5) break;
      await res.arrayBuffer();
      await sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
    }
    if (res.status !== 201 && res.status !== 200)
      throw new Error(`checkout answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { orderId: string; checkoutSessionId: string; checkoutUrl: string };
  }

  runsOfEvent(eventId: string): Promise<RunView[]> {
    return runsOfEvent(this.engineUrl, eventId);
  }

  /** Polls until `check` passes or `timeoutMs` runs out (the app and engine work asynchronously). */
  async eventually<T>(check: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    while (Date.now() < deadline) {
      try {
        return await check();
      } catch (error) {
        lastError = error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    throw lastError;
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

  stripeCalls(endpoint: string) {
    return this.sandbox.requests.filter((r) => r.endpoint === endpoint);
  }

  async close(): Promise<void> {
    await this.app.stop("SIGTERM");
    await this.engine.close();
    await this.proxy?.close();
    await this.sandbox.close();
    await this.easyPost.close();
    await this.smtp.close();
    await this.slack.close();
    await this.database.drop();
  }
}
