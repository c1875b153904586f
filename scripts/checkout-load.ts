/**
 * `npm run bench:checkout [-- --requests 200 --stock 20 --pool 10]`: checkout under load. That
 * many checkouts at once (each its own customer and Idempotency-Key, one unit each) for one
 * product with `--stock` units, against PostgreSQL (TEST_DATABASE_URL as in the tests, or by default
 * an embedded PostgreSQL started for the run; loopback only), in a scratch database dropped at the end. Prints how many got 201,
 * 409 and 503 (anything else is a failure), how many orders and Stripe sessions were left
 * half-made (must be 0), whether stock was oversold, and latency percentiles. Exits 1 on a failure.
 *
 * The service's checkout runs in this process as `npm start` builds it (createOrderIntake, the
 * Stripe sandbox driven by stripe-node), with the pool from DATABASE_POOL_SIZE /
 * DATABASE_POOL_TIMEOUT (or --pool). No request is retried: a 503 is counted as the client saw it.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent, request } from "node:http";
import pino from "pino";
import { createLogAlerter } from "../src/alerts";
import { buildApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createDatabase } from "../src/db/client";
import { migrate } from "../src/db/migrator";
import { createStripeSandbox } from "../src/dev/stripe-sandbox";
import { createDatabaseReadiness } from "../src/health/readiness";
import { createPrismaInventoryRepository } from "../src/inventory/prisma-inventory-repository";
import { createOrderIntake } from "../src/orders/order-intake";
import { createStripeClient } from "../src/payments/stripe-client";
import { durationMs } from "../src/shared/duration";
import { createTestDatabase } from "../test/support/database";
import { benchDatabaseServer } from "./bench/database-server";

const webhookSecret = "whsec_bench_checkout_0123456789";
const loopback = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isInteger(value) || value < 1 || value > 5000) throw new Error(`--${name} must be 1..5000`);
  return value;
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);

/** One POST /api/checkout on its own connection (all of them at once, as 200 clients would). */
function checkout(agent: Agent, url: URL, index: number): Promise<{ status: number; ms: number }> {
  const body = JSON.stringify({
    customerId: `cus-load-${index}`,
    email: `load-${index}@example.com`,
    items: [{ sku: "LOAD", quantity: 1 }],
  });
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method: "POST",
        path: "/api/checkout",
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          "idempotency-key": `load-${index}`,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6 }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  // eslint-disable-next-line no-restricted-properties -- configured like the tests
  const server = await benchDatabaseServer(process.env.TEST_DATABASE_URL);
  // eslint-disable-next-line no-restricted-properties -- createTestDatabase reads it
  process.env.TEST_DATABASE_URL = server.url;
  try {
    await run();
  } finally {
    await server.stop();
  }
}

async function run(): Promise<void> {
  const config = loadConfig();
  const requests = flag("requests", 200);
  const stock = flag("stock", 20);
  const pool = flag("pool", config.DATABASE_POOL_SIZE);
  const logger = pino({ level: "silent" });

  const database = await createTestDatabase({ migrated: false });
  const host = new URL(database.url).hostname;
  if (!loopback.has(host)) {
    await database.drop();
    throw new Error(`bench:checkout runs against a loopback PostgreSQL only, not ${host}`);
  }
  await migrate(database.url);
  const sandbox = createStripeSandbox({ webhookSecret, logger });
  const stripeApiBase = (await sandbox.listen(0, "127.0.0.1")).url;
  const db = createDatabase(database.url, {
    maxConnections: pool,
    connectionTimeoutMs: durationMs(config.DATABASE_POOL_TIMEOUT),
  });
  let server: Server | undefined;
  try {
    await db.product.create({
      data: { sku: "LOAD", name: "Load test mug", unitPrice: 1200, currency: "usd", stockOnHand: stock },
    });
    const intake = createOrderIntake({
      db,
      stripe: createStripeClient({ secretKey: "sk_test_bench_checkout", apiBase: stripeApiBase }),
      inventory: createPrismaInventoryRepository(db),
      publisher: { publish: async () => undefined },
      logger,
      alerts: createLogAlerter({ runUrlTemplate: "", logger }),
      webhookSecret,
      captureMethod: config.PAYMENT_CAPTURE,
      publicUrl: "http://shop.bench",
      sessionTtlMs: durationMs(config.CHECKOUT_SESSION_TTL),
    });
    const app = buildApp({
      logger,
      readiness: await createDatabaseReadiness(db),
      stripeWebhook: intake.stripeWebhook,
      checkout: intake.checkout,
    });
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, "127.0.0.1", () => resolve(listening));
    });
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);

    process.stdout.write(
      `checkout load: ${requests} concurrent checkouts, ${stock} in stock, pool ${pool} ` +
        `(timeout ${config.DATABASE_POOL_TIMEOUT}), PostgreSQL at ${host}\n`,
    );
    const agent = new Agent({ keepAlive: false, maxSockets: requests });
    const results = await Promise.all(Array.from({ length: requests }, (_, i) => checkout(agent, url, i)));
    agent.destroy();

    const count = (status: number) => results.filter((r) => r.status === status).length;
    const other = results.filter((r) => ![201, 409, 503].includes(r.status));
    const halfMadeOrders = await db.order.count({ where: { status: "pending", checkoutSessionId: null } });
    // A session Stripe made whose order does not point at it, and that was not expired: payable, lost.
    const sessionOrders = new Set(
      sandbox.requests
        .filter((r) => r.endpoint === "checkout.sessions.create" && r.status === 200)
        .map((r) => String(r.params.client_reference_id)),
    );
    const expiredFor = new Set(
      sandbox
        .events("checkout.session.expired")
        .map((e) => String((e.data.object as { client_reference_id?: string }).client_reference_id)),
    );
    const attached = new Set(
      (await db.order.findMany({ where: { checkoutSessionId: { not: null } }, select: { id: true } })).map(
        (o) => o.id,
      ),
    );
    const halfMadeSessions = [...sessionOrders].filter(
      (id) => !attached.has(id) && !expiredFor.has(id),
    ).length;
    const product = await db.product.findUniqueOrThrow({ where: { sku: "LOAD" } });
    const held = await db.stockHold.aggregate({ where: { status: "held" }, _sum: { quantity: true } });
    const heldUnits = held._sum.quantity ?? 0;
    const oversold = product.stockOnHand < 0 || heldUnits + product.stockOnHand !== stock;
    const latencies = results.map((r) => r.ms).sort((a, b) => a - b);

    process.stdout.write(
      `201: ${count(201)}   409: ${count(409)}   503: ${count(503)}   other: ${other.length}` +
        `${other.length > 0 ? ` ${JSON.stringify(other.map((r) => r.status))}` : ""}\n` +
        `half-made orders: ${halfMadeOrders}   half-made sessions: ${halfMadeSessions}\n` +
        `stock: ${product.stockOnHand} on hand + ${heldUnits} held = ${product.stockOnHand + heldUnits} of ${stock}` +
        `   oversold: ${oversold ? "YES" : "no"}\n` +
        `latency: p50 ${percentile(latencies, 50).toFixed(0)} ms   p99 ${percentile(latencies, 99).toFixed(0)} ms` +
        `   max ${percentile(latencies, 100).toFixed(0)} ms\n`,
    );
    if (other.length > 0 || halfMadeOrders > 0 || halfMadeSessions > 0 || oversold) process.exitCode = 1;
  } finally {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await db.$disconnect();
    await sandbox.close();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:checkout failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
