import { rateTableSchema, quoteShipping } from "../../src/shipping/rate-table";
import { IntakeHarness } from "./intake-harness";

/** A small shop table: the US only, two rates; Canada and the rest of the world are not covered. */
const table = rateTableSchema.parse({
  currency: "usd",
  zones: [
    {
      name: "United States",
      destinations: [{ country: "US" }],
      rates: [
        {
          id: "standard",
          displayName: "Standard",
          pricing: { type: "flat", amount: 500 },
          freeOverAmount: 10_000,
          deliveryEstimate: {
            minimum: { unit: "business_day", value: 3 },
            maximum: { unit: "business_day", value: 5 },
          },
        },
        {
          id: "express",
          displayName: "Express",
          pricing: {
            type: "weight_band",
            bands: [
              { upToOz: 32, amount: 1500 },
              { upToOz: 160, amount: 2500 },
            ],
          },
        },
      ],
    },
  ],
});
const itemWeightOz = 16;

describe("checkout with the shop's shipping rate table (SHIPPING_RATE_TABLE)", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start({ shippingRates: { table, itemWeightOz } });
  });
  afterAll(() => h.close());

  const post = async (body: unknown) => {
    const res = await fetch(`${h.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      body: (await res.json()) as { error?: { code: string }; [key: string]: unknown },
    };
  };
  const sessionCreates = () => h.sandbox.requests.filter((r) => r.endpoint === "checkout.sessions.create");
  const nothingFor = async (customerId: string) => ({
    orders: await h.db.order.count({ where: { customerId } }),
    checkoutRequests: await h.db.checkoutRequest.count({ where: { customerId } }),
  });

  it.each([
    ["no destination", "shipping_destination_required", undefined],
    ["a destination the table does not cover", "shipping_destination_not_covered", { country: "DE" }],
  ])("refuses %s with 422 and creates nothing", async (_what, code, destination) => {
    const customerId = `cus-${code}`;
    const creates = sessionCreates().length;
    const stock = (await h.db.product.findUniqueOrThrow({ where: { sku: "MUG" } })).stockOnHand;
    const res = await post({
      customerId,
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 1 }],
      ...(destination ? { destination } : {}),
    });
    expect(res).toMatchObject({ status: 422, body: { error: { code } } });
    expect(await nothingFor(customerId)).toEqual({ orders: 0, checkoutRequests: 0 });
    expect(sessionCreates()).toHaveLength(creates);
    expect((await h.db.product.findUniqueOrThrow({ where: { sku: "MUG" } })).stockOnHand).toBe(stock);
  });

  it("offers the table's quote for a covered destination as the session's shipping options, and Stripe totals it", async () => {
    const destination = { country: "US", region: "CA", postalCode: "94107" };
    const res = await post({
      customerId: "cus-ships",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 2 }],
      destination,
    });
    expect(res.status).toBe(201);
    const expected = quoteShipping(table, destination, {
      subtotal: 2 * 1200,
      parcelWeightsOz: [2 * itemWeightOz],
    });
    expect(expected.map((q) => [q.rateId, q.amount])).toEqual([
      ["standard", 500],
      ["express", 1500],
    ]);

    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session.shipping_options.map((option) => option.shipping_amount)).toEqual(
      expected.map((q) => q.amount),
    );
    const rates = await Promise.all(
      session.shipping_options.map((option) => h.stripe.shippingRates.retrieve(String(option.shipping_rate))),
    );
    expect(
      rates.map((rate) => ({
        name: rate.display_name,
        amount: rate.fixed_amount?.amount,
        estimate: rate.delivery_estimate ?? null,
        rateId: rate.metadata.rateId,
      })),
    ).toEqual(
      expected.map((q) => ({
        name: q.displayName,
        amount: q.amount,
        estimate: q.deliveryEstimate,
        rateId: q.rateId,
      })),
    );
    // The first option is preselected: the total is the goods plus its price.
    expect(session.amount_total).toBe(2 * 1200 + (expected[0]?.amount ?? Number.NaN));
    expect(session.shipping_cost?.amount_total).toBe(expected[0]?.amount);

    const stored = await h.db.checkoutRequest.findUniqueOrThrow({
      where: { orderId: String(res.body.orderId) },
    });
    expect(stored.destination).toEqual(destination);
    expect(stored.shippingOptions).toEqual(
      expected.map(({ rateId, displayName, amount, currency, deliveryEstimate }) => ({
        rateId,
        displayName,
        amount,
        currency,
        deliveryEstimate,
      })),
    );
  });

  it("the sweep finishes a half-made checkout with a destination under the same key and identical parameters", async () => {
    const res = await post({
      customerId: "cus-half-made",
      email: "ada@example.com",
      items: [{ sku: "TEE", quantity: 1 }],
      destination: { country: "US", region: "NY" },
    });
    expect(res.status).toBe(201);
    const orderId = String(res.body.orderId);
    // As if the session was made at Stripe but its attach never committed here.
    await h.db.order.update({ where: { id: orderId }, data: { checkoutSessionId: null } });

    const later = new Date(Date.now() + 3 * 60_000);
    expect(await h.checkoutSweep.expireHalfMadeOrders(later)).toMatchObject({ expired: 1, failed: 0 });
    const creates = sessionCreates().filter((r) => r.params.client_reference_id === orderId);
    expect(creates).toHaveLength(2);
    // Stripe refuses a key replayed with other parameters (idempotency_error); these are the same.
    expect(creates[1]?.params).toEqual(creates[0]?.params);
    expect(creates.every((r) => r.status === 200)).toBe(true);
    expect((creates[0]?.params as { shipping_options?: unknown[] }).shipping_options).toHaveLength(2);
    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session.status).toBe("expired");
    expect(await h.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "expired",
    });
  });

  it("asks nothing of a digital-only order", async () => {
    await h.db.product.create({
      data: { sku: "EBOOK", name: "E-book", unitPrice: 900, currency: "usd", stockOnHand: 10, digital: true },
    });
    const res = await post({
      customerId: "cus-digital",
      email: "ada@example.com",
      items: [{ sku: "EBOOK", quantity: 1 }],
    });
    expect(res.status).toBe(201);
    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session.shipping_options).toEqual([]);
    expect(session.amount_total).toBe(900);
  });
});
