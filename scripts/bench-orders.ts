/**
 * `npm run bench:orders [-- --orders 300 --database-url postgresql://...]` (default: an embedded
 * PostgreSQL started for the run)
 *
 * Orders fulfilled per second, end to end, on this machine: checkout through our API, the
 * customer completing it in the Stripe stand-in, the signed webhook, shop/order.placed, and every
 * fulfil-order step driven by the local engine over HTTP against serve(), until each order is
 * `completed`. Stand-in providers (Stripe sandbox, SMTP server, sandbox carrier); the engine's
 * clock runs a billion times faster so the 14-day wait and 3-day sleep are skipped. Every order
 * has its own customer, so the per-customer concurrency limit does not serialise them.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { Client } from "pg";
import { SMTPServer } from "smtp-server";
import { buildApp } from "../src/app";
import { parseConfig } from "../src/config";
import { migrate } from "../src/db/migrator";
import { benchDatabaseServer } from "./bench/database-server";
import { createEngineClock, createLocalEngine } from "../src/dev/inngest-engine";
import { createStripeSandbox } from "../src/dev/stripe-sandbox";
import { createLogger } from "../src/logger";
import { createServices } from "../src/wiring";

const { values: args } = parseArgs({
  options: {
    orders: { type: "string", default: "300" },
    "database-url": { type: "string" },
    concurrency: { type: "string", default: "50" },
  },
});
const orderCount = Number(args.orders);
const checkoutConcurrency = Number(args.concurrency);
if (
  !Number.isInteger(orderCount) ||
  orderCount < 1 ||
  !Number.isInteger(checkoutConcurrency) ||
  checkoutConcurrency < 1
) {
  process.stderr.write("bench:orders: --orders and --concurrency take positive whole numbers\n");
  process.exit(2);
}

// Count every query this process sends (Prisma's adapter and the engine both speak through pg).
let queries = 0;
const originalQuery = Client.prototype.query;
Client.prototype.query = function countedQuery(this: Client, ...params: unknown[]) {
  queries += 1;
  return (originalQuery as (...p: unknown[]) => unknown).apply(this, params);
} as typeof Client.prototype.query;

async function withAdmin<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function startSmtpSink(): Promise<{ url: string; close(): Promise<void>; received: () => number }> {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, _session, callback) {
      stream.on("data", () => undefined);
      stream.on("end", () => {
        received += 1;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received: () => received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

async function pool<T>(items: T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

async function main(): Promise<void> {
  const databaseServer = await benchDatabaseServer(args["database-url"]);
  stopDatabaseServer = databaseServer.stop;
  const adminUrl = databaseServer.url;
  const dbName = `of_bench_${Date.now()}`;
  await withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  const databaseUrl = url.toString();
  await migrate(databaseUrl);

  const logger = createLogger({ level: "warn" });
  const smtp = await startSmtpSink();
  const sandbox = createStripeSandbox({ webhookSecret: "whsec_bench_secret", logger });
  const stripeUrl = (await sandbox.listen(0, "127.0.0.1")).url;
  const engine = createLocalEngine({
    databaseUrl,
    logger,
    clock: createEngineClock({ timeScale: 1e9 }),
    pollIntervalMs: 50,
  });
  const engineUrl = (await engine.listen(0, "127.0.0.1")).url;

  const config = parseConfig({
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    SMTP_URL: smtp.url,
    PUBLIC_URL: "http://shop.test",
  });
  const services = await createServices({
    config,
    logger,
    endpoints: {
      databaseUrl,
      stripeSecretKey: "sk_test_bench",
      stripeApiBase: stripeUrl,
      stripeWebhookSecret: "whsec_bench_secret",
      localEngineUrl: engineUrl,
      adminToken: "bench-admin-token-0123456789",
      carrierWebhookSecret: "bench-carrier-secret-0123456789",
    },
  });
  await services.db.product.create({
    data: {
      sku: "BENCH-1",
      name: "Bench item",
      unitPrice: 1000,
      currency: "usd",
      stockOnHand: orderCount * 2,
    },
  });

  let appRequests = 0;
  let serveCalls = 0;
  const server = http.createServer(buildApp(services));
  server.prependListener("request", (req: http.IncomingMessage) => {
    appRequests += 1;
    if (req.url?.startsWith(config.INNGEST_SERVE_PATH)) serveCalls += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox.setWebhookUrl(`${appUrl}/api/stripe/webhook`);
  await engine.sync(`${appUrl}${config.INNGEST_SERVE_PATH}`);

  let eventApiCalls = 0;
  const originalFetch = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    if (String(input instanceof Request ? input.url : input).startsWith(engineUrl)) eventApiCalls += 1;
    return originalFetch(input, init);
  };

  const queriesBefore = queries;
  const started = performance.now();
  await pool(
    Array.from({ length: orderCount }, (_, i) => i),
    checkoutConcurrency,
    async (i) => {
      const res = await originalFetch(`${appUrl}/api/checkout`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          customerId: `cus_bench_${i}`,
          email: `buyer${i}@example.com`,
          items: [{ sku: "BENCH-1", quantity: 1 }],
        }),
      });
      if (res.status !== 201) throw new Error(`checkout answered ${res.status}: ${await res.text()}`);
      const { checkoutSessionId } = (await res.json()) as { checkoutSessionId: string };
      await sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    },
  );
  const intakeDone = performance.now();

  for (;;) {
    const completed = await services.db.order.count({ where: { status: "completed" } });
    const failed = await services.db.order.count({
      where: { status: { in: ["payment_failed", "cancelled"] } },
    });
    if (failed > 0) throw new Error(`${failed} orders failed during the benchmark`);
    if (completed === orderCount) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const finished = performance.now();
  const seconds = (finished - started) / 1000;
  const runQueries = queries - queriesBefore;

  const stripeCalls = sandbox.requests.length;
  const httpCalls = appRequests + stripeCalls + eventApiCalls;
  const lines = [
    `orders:                 ${orderCount} (one customer each, ${checkoutConcurrency} checkouts at a time)`,
    `checkout + webhooks:    ${((intakeDone - started) / 1000).toFixed(2)} s`,
    `all orders completed:   ${seconds.toFixed(2)} s`,
    `serve() calls / order:  ${(serveCalls / orderCount).toFixed(1)} (engine -> app, one per step or wait)`,
    `HTTP calls / order:     ${(httpCalls / orderCount).toFixed(1)} (app ${appRequests}, Stripe API ${stripeCalls}, event API ${eventApiCalls}; webhooks counted in app)`,
    `DB queries / order:     ${(runQueries / orderCount).toFixed(1)} (app + engine, this process)`,
    `e-mails sent:           ${smtp.received()}`,
    `orders/s: ${(orderCount / seconds).toFixed(1)}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);

  globalThis.fetch = originalFetch;
  await engine.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await services.close();
  await sandbox.close();
  await smtp.close();
  await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`));
}

let stopDatabaseServer: () => Promise<void> = async () => undefined;

main()
  .finally(() => stopDatabaseServer())
  .then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`bench:orders failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
