import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog, type CapturedLog } from "../support/log-capture";

/**
 * A signed customer link opens that customer's order page (address included): its signature is a
 * credential. It must never be written to a log, nor leak to another site in a Referer header.
 */

const adminToken = "links-admin-token-0123456789";

describe("customer links", () => {
  let database: TestDatabase;
  let services: Services;
  let app: ReturnType<typeof buildApp>;
  let log: CapturedLog;
  let orderId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    log = captureLog("trace");
    services = await createServices({
      config: parseConfig({ NODE_ENV: "test", SHIPPING_CARRIER: "sandbox" }),
      logger: log.logger,
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_links",
        stripeWebhookSecret: "whsec_links_0123456789",
        adminToken,
        carrierWebhookSecret: "links-carrier-secret-0123456789",
      },
    });
    app = buildApp(services);
    ({ id: orderId } = await database.db.order.create({
      data: {
        customerId: "cus_links",
        email: "links@example.com",
        currency: "usd",
        total: 1000,
        status: "delivered",
      },
    }));
  });
  afterAll(async () => {
    await services.close();
    await database.drop();
  });

  const pathOf = (url: string) => {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  };

  it("a run that opened customer links has no signature in its logs", async () => {
    const { links } = services;
    const opened = [
      links.order(orderId),
      links.review(orderId),
      links.checkoutCancelled(orderId),
      `${links.order(orderId)}&utm_source=mail`,
    ];
    for (const url of opened) {
      const res = await request(app).get(pathOf(url));
      expect(res.status).toBeLessThan(500);
    }
    // A forged signature (a 404) and a failing request are logged too, at warn and error.
    await request(app).get(`/orders/${orderId}?sig=forged-signature-000000`).expect(404);
    await request(app).get(`/orders/${orderId}/status?sig=${links.sign("order", orderId)}&token=abc`);

    const text = log.text();
    const signatures = opened.map((url) => new URL(url).searchParams.get("sig"));
    expect(text).toContain(`/orders/${orderId}`);
    for (const sig of signatures) expect(text).not.toContain(sig);
    // The grep a reviewer runs: every sig= or token= in the log is followed by the redaction mark.
    expect(text.match(/(?:sig|token)=(?!\[redacted\])[^&"\s]+/g)).toBeNull();
    expect(text).not.toContain("forged-signature-000000");
  });

  it("pages tell browsers never to send a link in a Referer header", async () => {
    const res = await request(app)
      .get(pathOf(services.links.order(orderId)))
      .expect(200);
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
    const api = await request(app).get("/api/products").expect(200);
    expect(api.headers["referrer-policy"]).toBe("no-referrer");
  });
});
