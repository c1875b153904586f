import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { Client } from "pg";
import Stripe from "stripe";
import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { isDatabaseUnavailable } from "../../src/db/unavailable";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { adminDatabaseUrl } from "../support/env";
import { captureLog } from "../support/log-capture";

/**
 * PostgreSQL gone (refusing connections, shutting down, not yet accepting them): every route that
 * needs it answers 503 database_unavailable with Retry-After, on the Prisma and the raw pg paths.
 */

const adminToken = "db-down-admin-token-0123456789";
const webhookSecret = "whsec_db_down_0123456789";

const checkoutBody = {
  customerId: "cus_db_down",
  email: "down@example.com",
  items: [{ sku: "DOWN-1", quantity: 1 }],
};

async function servicesOn(databaseUrl: string): Promise<Services> {
  return createServices({
    config: parseConfig({ NODE_ENV: "test", DATABASE_POOL_TIMEOUT: "2s" }),
    logger: captureLog("debug").logger,
    endpoints: {
      databaseUrl,
      stripeSecretKey: "sk_test_db_down",
      stripeWebhookSecret: webhookSecret,
      adminToken,
      easyPost: { apiKey: "EZTK_test_unused" },
    },
  });
}

/** A signed delivery: Stripe retries a 503, so the event is not lost while the database is away. */
function stripeDelivery(app: ReturnType<typeof buildApp>) {
  const payload = JSON.stringify({
    id: `evt_db_down_${Date.now()}`,
    object: "event",
    type: "checkout.session.expired",
    created: Math.floor(Date.now() / 1000),
    data: { object: { id: "cs_db_down", object: "checkout.session", metadata: {} } },
  });
  return request(app)
    .post("/api/stripe/webhook")
    .set("Content-Type", "application/json")
    .set("Stripe-Signature", Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }))
    .send(payload);
}

async function expectDatabaseUnavailable(app: ReturnType<typeof buildApp>): Promise<void> {
  const answers = [
    await stripeDelivery(app),
    await request(app).get("/api/products"),
    await request(app).post("/api/checkout").send(checkoutBody),
    await request(app).get("/api/orders").set("Authorization", `Bearer ${adminToken}`),
    await request(app)
      .get("/api/orders/7d3f6a2e-3c1b-4b8e-9a55-2f0c6f1d9e01")
      .set("Authorization", `Bearer ${adminToken}`),
    await request(app).get("/track/1Z999AA10123456784"),
  ];
  for (const res of answers) {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({
      status: 503,
      code: "database_unavailable",
    });
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
  }
}

/** A loopback port nothing listens on: connecting to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the database gone", () => {
  it("connections refused (ECONNREFUSED from pg): 503 database_unavailable with Retry-After", async () => {
    const services = await servicesOn(`postgresql://nobody:nothing@127.0.0.1:${await closedPort()}/none`);
    try {
      await expectDatabaseUnavailable(buildApp(services));
    } finally {
      await services.close();
    }
  });

  describe("the database not accepting connections (55000) after its sessions were ended (57P01)", () => {
    let database: TestDatabase;
    let services: Services;
    let app: ReturnType<typeof buildApp>;

    beforeAll(async () => {
      database = await createTestDatabase();
      await database.db.product.create({
        data: { sku: "DOWN-1", name: "Down", unitPrice: 1000, currency: "usd", stockOnHand: 5 },
      });
      services = await servicesOn(database.url);
      app = buildApp(services);
      // Up first: the pools hold live connections that the server then ends.
      await request(app).get("/api/products").expect(200);
      await request(app).get("/api/orders").set("Authorization", `Bearer ${adminToken}`).expect(200);
      const admin = new Client({ connectionString: adminDatabaseUrl() });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE "${database.name}" ALLOW_CONNECTIONS false`);
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [database.name],
        );
      } finally {
        await admin.end();
      }
    });
    afterAll(async () => {
      await services.close();
      const admin = new Client({ connectionString: adminDatabaseUrl() });
      await admin.connect();
      try {
        await admin.query(`ALTER DATABASE "${database.name}" ALLOW_CONNECTIONS true`);
      } finally {
        await admin.end();
      }
      await database.drop();
    });

    it("answers 503 database_unavailable with Retry-After on checkout, products and the admin API", async () => {
      await expectDatabaseUnavailable(app);
    });
  });

  describe("one classification of the errors that mean the database is gone", () => {
    const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });

    it.each([
      ["PostgreSQL: not accepting connections", withCode("55000")],
      ["PostgreSQL: admin shutdown", withCode("57P01")],
      ["PostgreSQL: crash shutdown", withCode("57P02")],
      ["PostgreSQL: cannot connect now (starting up)", withCode("57P03")],
      ["PostgreSQL: too many connections", withCode("53300")],
      ["pg: connection refused", withCode("ECONNREFUSED")],
      ["pg: connection timed out", withCode("ETIMEDOUT")],
      ["pg: connection reset", withCode("ECONNRESET")],
      ["Prisma: can't reach the server", withCode("P1001")],
      ["Prisma: connection closed", withCode("P1017")],
      ["Prisma: pool timeout", withCode("P2024")],
      ["Prisma: transaction could not start", withCode("P2028")],
      ["pg-pool: no connection in time", new Error("timeout exceeded when trying to connect")],
      ["pg: the server ended the connection", new Error("Connection terminated unexpectedly")],
      [
        "Prisma's adapter: the cause's code, wrapped",
        Object.assign(new Error("DriverAdapterError"), { cause: withCode("57P01") }),
      ],
    ])("%s", (_name, error) => {
      expect(isDatabaseUnavailable(error)).toBe(true);
    });

    it.each([
      ["a unique violation", withCode("23505")],
      ["a serialization failure", withCode("40001")],
      ["Prisma: record not found", withCode("P2025")],
      ["a plain error", new Error("boom")],
      ["not an error", "ECONNREFUSED"],
    ])("not %s", (_name, error) => {
      expect(isDatabaseUnavailable(error)).toBe(false);
    });
  });
});
