import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import Stripe from "stripe";
import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog, type CapturedLog } from "../support/log-capture";

/** The edges an attack on the running service found soft, each now firm. */

const adminToken = "edge-admin-token-0123456789";
const webhookSecret = "whsec_edge_0123456789";
const signingKey = `signkey-test-${randomBytes(32).toString("hex")}`;

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (error) {
    return (error as { problems: string[] }).problems;
  }
}

describe("edge hardening", () => {
  let database: TestDatabase;
  let services: Services;
  let app: ReturnType<typeof buildApp>;
  let log: CapturedLog;

  beforeAll(async () => {
    database = await createTestDatabase();
    log = captureLog("debug");
    services = await createServices({
      // Cloud mode (a signing key, no engine): the production code path of serve().
      config: parseConfig({
        NODE_ENV: "test",
        INNGEST_SIGNING_KEY: signingKey,
        INNGEST_EVENT_KEY: "edge-event-key",
        ADMIN_RATE_LIMIT: "3",
        TRUST_PROXY: "loopback",
      }),
      logger: log.logger,
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_edge",
        stripeWebhookSecret: webhookSecret,
        adminToken,
        easyPost: { apiKey: "EZTK_test_unused" },
      },
    });
    app = buildApp(services);
    await database.db.product.create({
      data: { sku: "EDGE-1", name: "Edge", unitPrice: 1000, currency: "usd", stockOnHand: 5 },
    });
  });
  afterAll(async () => {
    await services.close();
    await database.drop();
  });

  describe("client errors that became 500 keep their status", () => {
    it("a NUL byte in customerId is a 400", async () => {
      const res = await request(app)
        .post("/api/checkout")
        .set("Content-Type", "application/json")
        .send('{"customerId":"cus_\\u0000x","email":"a@example.com","items":[{"sku":"EDGE-1","quantity":1}]}')
        .expect(400);
      expect(res.body.error.code).toBe("invalid_json");
    });

    it("a corrupt gzip body is a 400", async () => {
      const gz = gzipSync(Buffer.from('{"customerId":"cus_1"}')).subarray(0, 12);
      const res = await request(app)
        .post("/api/checkout")
        .set("Content-Type", "application/json")
        .set("Content-Encoding", "gzip")
        .send(gz)
        .expect(400);
      expect(res.body.error).toEqual({ code: "bad_request", message: "The request is malformed" });
    });

    it("%E0%A4%A in an order id is a 400", async () => {
      const res = await request(app)
        .get("/api/orders/%E0%A4%A")
        .set("Authorization", `Bearer ${adminToken}`)
        .expect(400);
      expect(res.body.error.code).toBe("bad_request");
    });

    it.each([
      ["null", "null"],
      [
        "without data",
        JSON.stringify({ id: "evt_edge_1", object: "event", type: "checkout.session.completed" }),
      ],
    ])("a signed Stripe webhook body %s is a 400", async (_name, payload) => {
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
      const res = await request(app)
        .post("/api/stripe/webhook")
        .set("Content-Type", "application/json")
        .set("Stripe-Signature", header)
        .send(payload)
        .expect(400);
      expect(res.body.error.code).toBe("validation_failed");
    });
  });

  it("Stripe webhook timestamps an hour in the future are refused", async () => {
    const payload = JSON.stringify({
      id: "evt_edge_future",
      object: "event",
      type: "checkout.session.expired",
      data: { object: { id: "cs_edge", object: "checkout.session" } },
    });
    const header = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: webhookSecret,
      timestamp: Math.floor(Date.now() / 1000) + 3600,
    });
    const res = await request(app)
      .post("/api/stripe/webhook")
      .set("Content-Type", "application/json")
      .set("Stripe-Signature", header)
      .send(payload)
      .expect(400);
    expect(res.body.error.code).toBe("invalid_signature");
  });

  it("/api/inngest bounds unsigned bodies small: a 1 MB unsigned call is refused unparsed", async () => {
    const body = JSON.stringify({ event: { data: { pad: "x".repeat(1024 * 1024) } } });
    // Refused before its body is read: an unsigned POST cannot be Inngest when signatures are required.
    await request(app)
      .post("/api/inngest?fnId=shop-fulfill-order&stepId=step")
      .set("Content-Type", "application/json")
      .send(body)
      .expect(401);
  });

  describe("the admin rate limit", () => {
    const guess = (client: string) =>
      request(app)
        .get("/api/orders/3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        .set("X-Forwarded-For", client)
        .set("Authorization", "Bearer wrong-token");

    it("counts failures per client and never throttles a valid token", async () => {
      for (let i = 0; i < 3; i++) await guess("203.0.113.1").expect(401);
      await guess("203.0.113.1").expect(429);
      // Someone else's bad tokens do not lock ops out, from any address.
      for (const client of ["203.0.113.1", "203.0.113.2"]) {
        await request(app)
          .get("/api/orders/3f2504e0-4f89-41d3-9a0c-0305e82c3301")
          .set("X-Forwarded-For", client)
          .set("Authorization", `Bearer ${adminToken}`)
          .expect(404);
      }
      await guess("203.0.113.2").expect(401);
    });
  });

  it("/metrics requires METRICS_TOKEN in production", () => {
    expect(problemsOf({ NODE_ENV: "production" })).toContain(
      "METRICS_TOKEN: required when NODE_ENV=production",
    );
  });

  it("admin responses carry Cache-Control: no-store and X-Content-Type-Options: nosniff", async () => {
    for (const token of [adminToken, "wrong"]) {
      const res = await request(app)
        .get("/api/orders/3f2504e0-4f89-41d3-9a0c-0305e82c3301")
        .set("X-Forwarded-For", "203.0.113.50")
        .set("Authorization", `Bearer ${token}`);
      expect([404, 401]).toContain(res.status);
      expect(res.headers["cache-control"]).toBe("no-store");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
    }
  });

  it("unsigned GET /api/inngest logs once, at warn, without a stack", async () => {
    const before = log.lines().length;
    for (let i = 0; i < 3; i++) await request(app).get("/api/inngest").expect(401);
    const lines = log.lines().slice(before);
    // The access log has its own line per request; these are the lines about the request itself.
    const about = lines.filter((line) => line.msg !== "request completed");
    expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    const warnings = about.filter((line) => Number(line.level) === 40);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).not.toMatch(/stack/);
  });
});
