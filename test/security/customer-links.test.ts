import { createHmac } from "node:crypto";
import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createCustomerLinks, deriveLinkSecret } from "../../src/pages";
import { redactUrlCredentials } from "../../src/shared/redact-url";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog, type CapturedLog } from "../support/log-capture";

/**
 * A signed customer link opens that customer's order page (address included): its signature is a
 * credential. It must never be written to a log, nor leak to another site in a Referer header.
 */

const adminToken = "links-admin-token-0123456789";

const day = 24 * 60 * 60 * 1000;

describe("signed links expire", () => {
  const orderId = "3f1c2a9e-1111-4222-8333-444455556666";
  const secret = "s".repeat(32);
  const sigOf = (url: string) => new URL(url).searchParams.get("sig");

  it("verify until their expiry, then read as expired; a changed expiry or id does not verify", () => {
    let now = Date.UTC(2026, 0, 1);
    const links = createCustomerLinks({
      publicUrl: "https://shop.example",
      secret,
      ttlMs: 30 * day,
      now: () => now,
    });
    const sig = sigOf(links.order(orderId));
    expect(links.check("order", orderId, sig)).toBe("valid");
    expect(links.verify("order", orderId, sig)).toBe(true);
    now += 30 * day - 1000;
    expect(links.check("order", orderId, sig)).toBe("valid");
    now += 2000;
    expect(links.check("order", orderId, sig)).toBe("expired");
    expect(links.verify("order", orderId, sig)).toBe(false);
    // Moving the expiry forward breaks the signature: it is signed with the purpose and the id.
    const [expiry = "", mac = ""] = String(sig).split(".");
    const later = (Number.parseInt(expiry, 36) + 365 * 24 * 3600).toString(36);
    expect(links.check("order", orderId, `${later}.${mac}`)).toBe("invalid");
    expect(links.check("review", orderId, sig)).toBe("invalid");
    expect(links.check("order", "3f1c2a9e-1111-4222-8333-444455556667", sig)).toBe("invalid");
    expect(links.check("order", orderId, undefined)).toBe("invalid");
    expect(links.check("order", orderId, ["a"])).toBe("invalid");
  });

  it("a link signed before links expired (no expiry in it) reads as expired, so its owner can get a fresh one", () => {
    const legacy = createHmac("sha256", secret).update(`order\0${orderId}`).digest("base64url").slice(0, 22);
    const links = createCustomerLinks({ publicUrl: "https://shop.example", secret });
    expect(links.check("order", orderId, legacy)).toBe("expired");
    expect(links.check("review", orderId, legacy)).toBe("invalid");
  });

  it("last LINK_TTL, 90 days unless configured; less than a day is refused", () => {
    expect(parseConfig({}).LINK_TTL).toBe("90d");
    expect(parseConfig({ LINK_TTL: "180d" }).LINK_TTL).toBe("180d");
    expect(() => parseConfig({ LINK_TTL: "5m" })).toThrow(/LINK_TTL/);
  });
});

describe("credentials in logged URLs", () => {
  it.each([
    ["/orders/x?sig=abc.def", "/orders/x?sig=[redacted]"],
    [
      "/checkout/cancelled?order_id=1&sig=abc&utm=mail",
      "/checkout/cancelled?order_id=1&sig=[redacted]&utm=mail",
    ],
    ["/checkout/success?session_id=cs_test_123", "/checkout/success?session_id=[redacted]"],
    ["/x?SIG=a&Token=b#frag", "/x?SIG=[redacted]&Token=[redacted]#frag"],
    [
      "fetch failed for https://shop.example/orders/1?sig=abc failed: ECONNRESET",
      "fetch failed for https://shop.example/orders/1?sig=[redacted] failed: ECONNRESET",
    ],
    ["/api/orders?q=signature&design=1", "/api/orders?q=signature&design=1"],
  ])("%s", (url, logged) => {
    expect(redactUrlCredentials(url)).toBe(logged);
  });
});

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
      config: parseConfig({ NODE_ENV: "test" }),
      logger: log.logger,
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_links",
        stripeWebhookSecret: "whsec_links_0123456789",
        adminToken,
        easyPost: { apiKey: "EZTK_test_unused" },
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

  describe("an expired link", () => {
    const expiredLinks = () =>
      createCustomerLinks({
        publicUrl: "http://shop.test",
        secret: deriveLinkSecret(adminToken),
        now: () => Date.now() - 200 * day,
      });
    const freshLinkEmails = () =>
      database.db.emailMessage.findMany({
        where: { orderId, template: "freshLink" },
        orderBy: { createdAt: "asc" },
      });

    it("gets a page that says so, with a way to have a fresh link e-mailed", async () => {
      for (const url of [expiredLinks().order(orderId), expiredLinks().review(orderId)]) {
        const res = await request(app).get(pathOf(url)).expect(410);
        expect(res.text).toContain("This link has expired");
        expect(res.text).toContain(`action="/orders/${orderId}/fresh-link"`);
        expect(res.text).not.toContain("links@example.com");
      }
    });

    it("e-mails a fresh link to the order's own address, once per window however often it is asked", async () => {
      const sig = String(new URL(expiredLinks().order(orderId)).searchParams.get("sig"));
      const ask = () =>
        request(app).post(`/orders/${orderId}/fresh-link`).type("form").send({ purpose: "order", sig });
      const first = await ask().expect(200);
      expect(first.text).toContain("a fresh link is on its way");
      expect(first.text).not.toContain("links@example.com");
      const again = await ask().expect(200);
      expect(again.text).toBe(first.text);
      const emails = await freshLinkEmails();
      expect(emails).toHaveLength(1);
      expect(emails[0]?.recipient).toBe("links@example.com");
      const fresh = /https?:\/\/[^\s"]+\/orders\/[^\s"]+\?sig=[^\s"&]+/.exec(
        String(emails[0]?.bodyText),
      )?.[0];
      expect(fresh).toBeDefined();
      await request(app)
        .get(pathOf(String(fresh)))
        .expect(200);
    });

    it("a forged signature gets the not-valid page and no e-mail", async () => {
      const before = (await freshLinkEmails()).length;
      const res = await request(app)
        .post(`/orders/${orderId}/fresh-link`)
        .type("form")
        .send({ purpose: "order", sig: "0.forged-signature-0000000" })
        .expect(404);
      expect(res.text).toContain("not valid");
      const unknown = await request(app)
        .post(`/orders/7d3f6a2e-3c1b-4b8e-9a55-2f0c6f1d9e01/fresh-link`)
        .type("form")
        .send({ purpose: "order", sig: "0.forged-signature-0000000" })
        .expect(404);
      expect(unknown.text).toBe(res.text);
      expect(await freshLinkEmails()).toHaveLength(before);
    });

    it("asking is rate-limited per client", async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i += 1) {
        const res = await request(app)
          .post(`/orders/${orderId}/fresh-link`)
          .type("form")
          .send({ purpose: "order", sig: `${i}.forged-signature-0000000` });
        statuses.push(res.status);
      }
      expect(statuses).toContain(429);
    });
  });
});
