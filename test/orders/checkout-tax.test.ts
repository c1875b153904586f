import { rateTableSchema } from "../../src/shipping/rate-table";
import { IntakeHarness } from "./intake-harness";

/** Stripe Tax and promotion codes at Checkout (CHECKOUT_* settings, decision 0204). */
const table = rateTableSchema.parse({
  currency: "usd",
  zones: [
    {
      name: "United States",
      destinations: [{ country: "US" }],
      rates: [{ id: "standard", displayName: "Standard", pricing: { type: "flat", amount: 500 } }],
    },
  ],
});
const shippingRates = { table, itemWeightOz: 16 };
const pricing = {
  automaticTax: true,
  taxBehavior: "inclusive" as const,
  allowPromotionCodes: true,
};

describe("checkout with Stripe Tax and promotion codes", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start({ shippingRates, pricing });
    await h.db.product.update({ where: { sku: "MUG" }, data: { taxCode: "txcd_99999999" } });
  });
  afterAll(() => h.close());

  const post = async (url: string, body: unknown) => {
    const res = await fetch(`${url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as { error?: { code: string; message: string }; [key: string]: unknown },
    };
  };
  const sessionCreates = () => h.sandbox.requests.filter((r) => r.endpoint === "checkout.sessions.create");
  const destination = { country: "US", region: "NY" };

  it("refuses a product without a tax code when the shop has no default: 422, nothing created, Stripe not asked", async () => {
    const creates = sessionCreates().length;
    const stock = (await h.db.product.findUniqueOrThrow({ where: { sku: "TEE" } })).stockOnHand;
    const res = await post(h.url, {
      customerId: "cus-no-code",
      email: "ada@example.com",
      items: [
        { sku: "MUG", quantity: 1 },
        { sku: "TEE", quantity: 1 },
      ],
      destination,
    });
    expect(res).toMatchObject({
      status: 422,
      body: { error: { code: "tax_code_required", message: expect.stringContaining("TEE") } },
    });
    expect(res.body.error?.message).not.toContain("MUG");
    expect(await h.db.order.count({ where: { customerId: "cus-no-code" } })).toBe(0);
    expect(await h.db.checkoutRequest.count({ where: { customerId: "cus-no-code" } })).toBe(0);
    expect(sessionCreates()).toHaveLength(creates);
    expect((await h.db.product.findUniqueOrThrow({ where: { sku: "TEE" } })).stockOnHand).toBe(stock);
  });

  it("sends each line's tax code (the product's, else the shop's default), the shop's tax behaviour, automatic tax and codes; stores them", async () => {
    const { url } = await h.anotherInstanceWith({
      shippingRates,
      pricing: { ...pricing, defaultTaxCode: "txcd_30011000" },
    });
    const res = await post(url, {
      customerId: "cus-taxed",
      email: "ada@example.com",
      items: [
        { sku: "TEE", quantity: 1 },
        { sku: "MUG", quantity: 2 },
      ],
      destination,
    });
    expect(res.status).toBe(201);
    const sent = sessionCreates().at(-1);
    expect(sent?.params).toMatchObject({
      automatic_tax: { enabled: "true" },
      allow_promotion_codes: "true",
      line_items: [
        {
          price_data: {
            tax_behavior: "inclusive",
            product_data: { metadata: { sku: "MUG" }, tax_code: "txcd_99999999" },
          },
        },
        {
          price_data: {
            tax_behavior: "inclusive",
            product_data: { metadata: { sku: "TEE" }, tax_code: "txcd_30011000" },
          },
        },
      ],
      shipping_options: [{ shipping_rate_data: { tax_behavior: "inclusive" } }],
    });
    const stored = await h.db.checkoutRequest.findUniqueOrThrow({
      where: { orderId: String(res.body.orderId) },
    });
    expect(stored.pricingTerms).toEqual({
      automaticTax: true,
      taxBehavior: "inclusive",
      allowPromotionCodes: true,
      taxCodes: { MUG: "txcd_99999999", TEE: "txcd_30011000" },
    });
    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session).toMatchObject({
      allow_promotion_codes: true,
      automatic_tax: { enabled: true, status: "requires_location_inputs" },
    });
  });

  it("the sweep rebuilds a half-made checkout's request byte for byte after the configuration and the catalog changed", async () => {
    const res = await post(h.url, {
      customerId: "cus-half-made-tax",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 1 }],
      destination,
    });
    expect(res.status).toBe(201);
    const orderId = String(res.body.orderId);
    await h.db.order.update({ where: { id: orderId }, data: { checkoutSessionId: null } });
    // Since then: the shop turned tax and codes off, and recoded the mug.
    await h.db.product.update({ where: { sku: "MUG" }, data: { taxCode: "txcd_40060003" } });
    const restarted = await h.anotherInstanceWith({
      shippingRates,
      pricing: { automaticTax: false, taxBehavior: "exclusive", allowPromotionCodes: false },
    });

    const later = new Date(Date.now() + 3 * 60_000);
    expect(await restarted.checkoutSweep.expireHalfMadeOrders(later)).toMatchObject({
      expired: 1,
      failed: 0,
    });
    const creates = sessionCreates().filter((r) => r.params.client_reference_id === orderId);
    expect(creates).toHaveLength(2);
    // Stripe refuses a key replayed with other parameters (idempotency_error); these are the same.
    expect(JSON.stringify(creates[1]?.params)).toBe(JSON.stringify(creates[0]?.params));
    expect(creates.map((r) => r.status)).toEqual([200, 200]);
    expect(creates[0]?.params).toMatchObject({
      automatic_tax: { enabled: "true" },
      line_items: [{ price_data: { product_data: { tax_code: "txcd_99999999" } } }],
    });
    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session.status).toBe("expired");
  });

  it("a shop with tax and codes off sends neither and stores nothing (the request as before)", async () => {
    const { url } = await h.anotherInstanceWith({
      shippingRates,
      pricing: { automaticTax: false, taxBehavior: "inclusive", allowPromotionCodes: false },
    });
    const res = await post(url, {
      customerId: "cus-plain",
      email: "ada@example.com",
      items: [{ sku: "TEE", quantity: 1 }],
      destination,
    });
    expect(res.status).toBe(201);
    const params = sessionCreates().at(-1)?.params as Record<string, unknown>;
    expect(Object.keys(params)).not.toEqual(expect.arrayContaining(["automatic_tax"]));
    expect(params.allow_promotion_codes).toBeUndefined();
    expect(JSON.stringify(params.line_items)).not.toMatch(/tax_/);
    expect(JSON.stringify(params.shipping_options)).not.toMatch(/tax_/);
    const stored = await h.db.checkoutRequest.findUniqueOrThrow({
      where: { orderId: String(res.body.orderId) },
    });
    expect(stored.pricingTerms).toBeNull();
  });
});
