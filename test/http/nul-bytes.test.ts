import Stripe from "stripe";
import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog } from "../support/log-capture";

/**
 * PostgreSQL text cannot hold U+0000. A NUL byte anywhere a request can carry one (a URL path, a
 * query string, a signed Stripe event's fields) is the client's mistake: 400, nothing stored.
 */

const adminToken = "nul-admin-token-0123456789";
const webhookSecret = "whsec_nul_0123456789";

describe("a NUL byte outside a JSON body", () => {
  let database: TestDatabase;
  let services: Services;
  let app: ReturnType<typeof buildApp>;

  beforeAll(async () => {
    database = await createTestDatabase();
    services = await createServices({
      config: parseConfig({ NODE_ENV: "test" }),
      logger: captureLog("debug").logger,
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_nul",
        stripeWebhookSecret: webhookSecret,
        adminToken,
        easyPost: { apiKey: "EZTK_test_unused" },
      },
    });
    app = buildApp(services);
  });
  afterAll(async () => {
    await services.close();
    await database.drop();
  });

  it.each([
    ["in the admin search's query (GET /api/orders?q=%00)", "/api/orders?q=%00"],
    ["in another admin query parameter", "/api/orders?status=paid%00"],
    ["in a public page's path (GET /track/%00)", "/track/%00"],
    ["in a customer link's order id", "/orders/%00?sig=x"],
  ])("%s is a 400", async (_name, url) => {
    const res = await request(app).get(url).set("Authorization", `Bearer ${adminToken}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad_request");
  });

  it("in a signed Stripe event's id is a 400, and nothing is stored", async () => {
    const payload = JSON.stringify({
      id: "evt_nul_\u0000x",
      object: "event",
      type: "checkout.session.expired",
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: "cs_nul", object: "checkout.session", metadata: {} } },
    });
    expect(payload).toContain("\\u0000");
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
    const res = await request(app)
      .post("/api/stripe/webhook")
      .set("Content-Type", "application/json")
      .set("Stripe-Signature", header)
      .send(payload);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad_request");
    expect(await database.db.stripeEvent.count()).toBe(0);
  });

  it("in a signed Stripe event's object is a 400 too", async () => {
    const payload = JSON.stringify({
      id: "evt_nul_object",
      object: "event",
      type: "checkout.session.completed",
      created: Math.floor(Date.now() / 1000),
      data: { object: { id: "cs_\u0000", object: "checkout.session", metadata: { order_id: "x\u0000" } } },
    });
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret });
    const res = await request(app)
      .post("/api/stripe/webhook")
      .set("Content-Type", "application/json")
      .set("Stripe-Signature", header)
      .send(payload);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("bad_request");
  });
});
