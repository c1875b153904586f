import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog } from "../support/log-capture";

/**
 * What a customer sees of their money (a released card hold, every refund, what they paid in the
 * end) and of the shop (its name, colour, help and legal line), and money as ops type it in the
 * console (major units) and as the API takes it (minor units, said so).
 */
const adminToken = "brand-admin-token-0123456789";
const brandEnv = {
  SHOP_NAME: "Acme & Sons",
  SHOP_ACCENT_COLOR: "#c0ffee",
  SHOP_SUPPORT_EMAIL: "help@acme.example",
  SHOP_LOGO_URL: "https://cdn.acme.example/logo.png",
  SHOP_FOOTER: "Acme & Sons GmbH · Musterstraße 1 · 10115 Berlin",
};

describe("customer pages: the shop's brand and the customer's money", () => {
  let database: TestDatabase;
  let services: Services;
  let app: ReturnType<typeof buildApp>;

  beforeAll(async () => {
    database = await createTestDatabase();
    services = await createServices({
      config: parseConfig({ NODE_ENV: "test", ...brandEnv }),
      logger: captureLog("debug").logger,
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_brand",
        stripeWebhookSecret: "whsec_brand_0123456789",
        adminToken,
        easyPost: { apiKey: "EZTK_test_unused" },
      },
    });
    app = buildApp(services);
    await database.db.product.create({
      data: { sku: "BEANS", name: "House beans", unitPrice: 2500, currency: "usd", stockOnHand: 0 },
    });
  });
  afterAll(async () => {
    await services.close();
    await database.drop();
  });

  const order = (data: {
    status: "cancelled" | "delivered";
    payment: {
      status: "voided" | "captured" | "refunded";
      authorized: number;
      captured: number;
      refunded: number;
    };
    refunds?: { amount: number; reason: string | null; status: "succeeded" | "pending" | "failed" }[];
  }) =>
    database.db.order.create({
      data: {
        customerId: "cus_money",
        email: "money@example.com",
        status: data.status,
        currency: "usd",
        total: 5000,
        lines: { create: [{ sku: "BEANS", name: "House beans", unitPrice: 2500, quantity: 2 }] },
        payment: {
          create: {
            providerId: `pi_${Math.random().toString(36).slice(2)}`,
            status: data.payment.status,
            currency: "usd",
            amountAuthorized: data.payment.authorized,
            amountCaptured: data.payment.captured,
            amountRefunded: data.payment.refunded,
          },
        },
        refunds: { create: (data.refunds ?? []).map((refund) => ({ ...refund, currency: "usd" })) },
      },
    });

  it("a cancelled order says its card hold was released and nothing charged", async () => {
    const cancelled = await order({
      status: "cancelled",
      payment: { status: "voided", authorized: 5000, captured: 0, refunded: 0 },
    });
    const page = await request(app)
      .get(services.links.order(cancelled.id).replace(/^https?:\/\/[^/]+/, ""))
      .expect(200);
    expect(page.text).toMatch(
      /The hold of <strong>\$50\.00<\/strong> on your card has been released: you\s+were not charged/,
    );
    expect(page.text).not.toContain('class="refund"');
  });

  it("shows every refund (ops' partial one and a return's) and what the customer paid in the end, not a failed one", async () => {
    const delivered = await order({
      status: "delivered",
      payment: { status: "captured", authorized: 5000, captured: 5000, refunded: 500 },
      refunds: [
        { amount: 500, reason: "dented tin (ops note)", status: "succeeded" },
        { amount: 1250, reason: "return 7d3f", status: "pending" },
        { amount: 999, reason: "refused by the bank", status: "failed" },
      ],
    });
    const page = await request(app)
      .get(services.links.order(delivered.id).replace(/^https?:\/\/[^/]+/, ""))
      .expect(200);
    const rows = [...page.text.matchAll(/<tr class="refund" data-amount="(\d+)">([\s\S]*?)<\/tr>/g)];
    expect(rows.map((row) => row[1])).toEqual(["500", "1250"]);
    expect(rows[0]?.[2]).toMatch(/Refund ·[\s\S]*−\$5\.00/);
    expect(rows[1]?.[2]).toMatch(/Refund for your return ·[\s\S]*on its way[\s\S]*−\$12\.50/);
    // Ops' own note is not shown to the customer.
    expect(page.text).not.toContain("ops note");
    expect(page.text).toMatch(/Charged to your card<\/td><td class="num">\$50\.00/);
    expect(page.text).toMatch(/You paid in the end<\/strong><\/td><td class="num"><strong>\$32\.50/);
  });

  it("shows a refund the workflow made itself (a cancel after capture), which has no refund row", async () => {
    const cancelled = await order({
      status: "cancelled",
      payment: { status: "refunded", authorized: 5000, captured: 5000, refunded: 5000 },
    });
    const page = await request(app)
      .get(services.links.order(cancelled.id).replace(/^https?:\/\/[^/]+/, ""))
      .expect(200);
    expect(page.text).toMatch(
      /<tr class="refund" data-amount="5000"><td>Refund: order cancelled<\/td><td class="num">−\$50\.00/,
    );
    expect(page.text).toMatch(/You paid in the end<\/strong><\/td><td class="num"><strong>\$0\.00/);
  });

  it("every customer page is the shop's: name and logo, its colour's stylesheet, help and legal line", async () => {
    const delivered = await order({
      status: "delivered",
      payment: { status: "captured", authorized: 5000, captured: 5000, refunded: 0 },
    });
    const page = await request(app)
      .get(services.links.order(delivered.id).replace(/^https?:\/\/[^/]+/, ""))
      .expect(200);
    expect(page.text).toContain("<title>Order ");
    expect(page.text).toContain(" · Acme &amp; Sons</title>");
    expect(page.text).toContain('<img class="logo" src="https://cdn.acme.example/logo.png" alt/>');
    expect(page.text).toContain("<span>Acme &amp; Sons</span>");
    expect(page.text).toContain('<a href="mailto:help@acme.example">help@acme.example</a>');
    expect(page.text).toContain("Acme &amp; Sons GmbH · Musterstraße 1 · 10115 Berlin");
    // The logo's origin may serve images; nothing else is loosened.
    expect(page.headers["content-security-policy"]).toContain(
      "img-src 'self' data: https://cdn.acme.example;",
    );
    const css = /<link rel="stylesheet" href="(\/assets\/brand-[0-9a-f]{12}\.css)"\/>/.exec(page.text)?.[1];
    expect(css).toBeDefined();
    const sheet = await request(app)
      .get(css as string)
      .expect(200);
    expect(sheet.text).toBe(":root{--accent:#c0ffee}\n");

    const notFound = await request(app).get("/orders/00000000-0000-4000-8000-000000000000?sig=x").expect(404);
    expect(notFound.text).toContain("<span>Acme &amp; Sons</span>");
  });

  it("the console takes prices in the currency's major unit and shows them so; the API says minor units (cents)", async () => {
    const login = await request(app).post("/ops/login").type("form").send({ token: adminToken }).expect(303);
    const cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
    const newPage = await request(app).get("/ops/products/new").set("Cookie", cookie).expect(200);
    expect(newPage.text).toContain("<title>New product · Acme &amp; Sons ops console</title>");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(newPage.text)?.[1] as string;
    const create = (form: Record<string, string>) =>
      request(app)
        .post("/ops/products")
        .set("Cookie", cookie)
        .type("form")
        .send({ _csrf: csrf, name: "Thing", ...form });

    await create({ sku: "USD-1", unitPrice: "12.50", currency: "usd" }).expect(303);
    await create({ sku: "JPY-1", unitPrice: "1250", currency: "jpy" }).expect(303);
    await create({ sku: "KWD-1", unitPrice: "1.234", currency: "kwd" }).expect(303);
    const prices = await database.db.product.findMany({
      where: { sku: { in: ["USD-1", "JPY-1", "KWD-1"] } },
      orderBy: { sku: "asc" },
    });
    expect(prices.map((p) => [p.sku, p.unitPrice])).toEqual([
      ["JPY-1", 1250],
      ["KWD-1", 1234],
      ["USD-1", 1250],
    ]);
    const yenDecimals = await create({ sku: "JPY-2", unitPrice: "12.50", currency: "jpy" }).expect(400);
    expect(yenDecimals.text).toContain("JPY has no decimals; type a whole amount such as 1250");
    const free = await create({ sku: "FREE-2", unitPrice: "0", currency: "usd" }).expect(400);
    expect(free.text).toMatch(/at least 1 minor unit/);
    expect(await database.db.product.count({ where: { sku: { in: ["JPY-2", "FREE-2"] } } })).toBe(0);

    const edit = await request(app).get("/ops/products/USD-1").set("Cookie", cookie).expect(200);
    expect(edit.text).toMatch(/name="unitPrice" value="12\.50"/);
    const list = await request(app).get("/ops/products").set("Cookie", cookie).expect(200);
    expect(list.text).toContain("¥1,250");

    const api = await request(app)
      .post("/api/admin/products")
      .set("Authorization", `Bearer ${adminToken}`)
      .send({ sku: "API-1", name: "Api", unitPrice: 12.5, currency: "usd" })
      .expect(400);
    expect(api.body.error.message).toMatch(/unitPrice: must be a whole number of minor units \(cents\)/);
    const refund = await request(app)
      .post("/api/orders/00000000-0000-4000-8000-000000000000/refund")
      .set("Authorization", `Bearer ${adminToken}`)
      .send({ amount: 12.5 })
      .expect(400);
    expect(refund.body.error).toMatchObject({ code: "validation_failed" });
    expect(refund.body.error.message).toMatch(
      /amount: must be a whole number of minor units \(cents\).*1250/,
    );
  });
  it("a product's Stripe tax code is set in the console and the API, cleared when emptied, and refused when not Stripe's shape", async () => {
    const login = await request(app).post("/ops/login").type("form").send({ token: adminToken }).expect(303);
    const cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
    const newPage = await request(app).get("/ops/products/new").set("Cookie", cookie).expect(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(newPage.text)?.[1] as string;
    const create = (form: Record<string, string>) =>
      request(app)
        .post("/ops/products")
        .set("Cookie", cookie)
        .type("form")
        .send({ _csrf: csrf, name: "Taxed", unitPrice: "10.00", currency: "usd", ...form });

    await create({ sku: "TAX-1", taxCode: "txcd_99999999" }).expect(303);
    await create({ sku: "TAX-2", taxCode: "" }).expect(303);
    const refused = await create({ sku: "TAX-3", taxCode: "food" }).expect(400);
    expect(refused.text).toContain("a Stripe tax code is txcd_ and eight digits");
    const taxCodes = await database.db.product.findMany({
      where: { sku: { startsWith: "TAX-" } },
      orderBy: { sku: "asc" },
      select: { sku: true, taxCode: true },
    });
    expect(taxCodes).toEqual([
      { sku: "TAX-1", taxCode: "txcd_99999999" },
      { sku: "TAX-2", taxCode: null },
    ]);
    const edit = await request(app).get("/ops/products/TAX-1").set("Cookie", cookie).expect(200);
    expect(edit.text).toMatch(/name="taxCode" value="txcd_99999999"/);

    const api = await request(app)
      .patch("/api/admin/products/TAX-2")
      .set("Authorization", `Bearer ${adminToken}`)
      .send({ taxCode: "txcd_10000000" })
      .expect(200);
    expect(api.body).toMatchObject({ sku: "TAX-2", taxCode: "txcd_10000000" });
  });
});
