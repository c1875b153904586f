import { IntakeHarness } from "./intake-harness";

describe("catalog and checkout", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start();
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

  it("lists the catalog with prices in minor units and the quantity available", async () => {
    const res = await fetch(`${h.url}/api/products`);
    expect(res.status).toBe(200);
    const { products } = (await res.json()) as { products: unknown[] };
    expect(products).toContainEqual({
      sku: "MUG",
      name: "Logo mug",
      unitPrice: 1200,
      currency: "usd",
      quantityAvailable: 50,
    });
    expect(products).toHaveLength(4);
  });

  it.each([
    ["no items", 400, "empty_order", { customerId: "c", email: "a@example.com", items: [] }],
    ["items missing", 400, "empty_order", { customerId: "c", email: "a@example.com" }],
    [
      "a zero quantity",
      400,
      "invalid_quantity",
      { customerId: "c", email: "a@example.com", items: [{ sku: "MUG", quantity: 0 }] },
    ],
    [
      "a fractional quantity",
      400,
      "invalid_quantity",
      { customerId: "c", email: "a@example.com", items: [{ sku: "MUG", quantity: 1.5 }] },
    ],
    [
      "more than 100",
      400,
      "invalid_quantity",
      { customerId: "c", email: "a@example.com", items: [{ sku: "MUG", quantity: 101 }] },
    ],
    [
      "more than 100 over repeated lines",
      400,
      "invalid_quantity",
      {
        customerId: "c",
        email: "a@example.com",
        items: [
          { sku: "TEE", quantity: 60 },
          { sku: "TEE", quantity: 60 },
        ],
      },
    ],
    [
      "a bad e-mail",
      400,
      "invalid_email",
      { customerId: "c", email: "not-an-address", items: [{ sku: "MUG", quantity: 1 }] },
    ],
    [
      "an unknown SKU",
      400,
      "unknown_sku",
      { customerId: "c", email: "a@example.com", items: [{ sku: "NOPE", quantity: 1 }] },
    ],
    [
      "no customer",
      400,
      "validation_failed",
      { email: "a@example.com", items: [{ sku: "MUG", quantity: 1 }] },
    ],
    [
      "more than the stock",
      409,
      "insufficient_stock",
      { customerId: "c", email: "a@example.com", items: [{ sku: "POSTER", quantity: 4 }] },
    ],
  ])("refuses %s: %i %s, creating nothing", async (_case, status, code, body) => {
    const before = await h.db.order.count();
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.body.error?.code).toBe(code);
    expect(await h.db.order.count()).toBe(before);
  });

  it("creates a pending order and a Checkout Session priced from our catalog", async () => {
    const res = await post({
      customerId: "cus-ada",
      email: "ada@example.com",
      items: [
        { sku: "MUG", quantity: 2, unitPrice: 1 },
        { sku: "POSTER", quantity: 3 },
      ],
    });
    expect(res.status).toBe(201);
    const { orderId, checkoutSessionId, checkoutUrl } = res.body as {
      orderId: string;
      checkoutSessionId: string;
      checkoutUrl: string;
    };
    expect(checkoutUrl).toContain(checkoutSessionId);

    const order = await h.order(orderId);
    expect(order).toMatchObject({
      status: "pending",
      total: 2 * 1200 + 3 * 1800,
      currency: "usd",
      checkoutSessionId,
      customerId: "cus-ada",
    });
    expect(order.lines.map((l) => [l.sku, l.unitPrice, l.quantity]).sort()).toEqual([
      ["MUG", 1200, 2],
      ["POSTER", 1800, 3],
    ]);

    const create = h.sandbox.requests.find(
      (r) =>
        r.endpoint === "checkout.sessions.create" &&
        r.status === 200 &&
        r.params.client_reference_id === orderId,
    );
    expect(create?.idempotencyKey).toBe(`checkout-session-${orderId}`);
    expect(create?.params).toMatchObject({
      mode: "payment",
      client_reference_id: orderId,
      customer_email: "ada@example.com",
      metadata: { orderId, customerId: "cus-ada" },
      payment_intent_data: { capture_method: "manual", metadata: { orderId, customerId: "cus-ada" } },
      line_items: [
        {
          price_data: { currency: "usd", unit_amount: "1200", product_data: { name: "Logo mug" } },
          quantity: "2",
        },
        {
          price_data: { currency: "usd", unit_amount: "1800", product_data: { name: "A2 poster" } },
          quantity: "3",
        },
      ],
    });
    expect(h.sandbox.checkoutSession(checkoutSessionId)?.amount_total).toBe(order.total);
  });

  it("refuses a cart that mixes currencies", async () => {
    const res = await post({
      customerId: "c",
      email: "a@example.com",
      items: [
        { sku: "MUG", quantity: 1 },
        { sku: "EURO-BAG", quantity: 1 },
      ],
    });
    expect(res).toMatchObject({ status: 400, body: { error: { code: "validation_failed" } } });
  });

  it("answers 503 with Retry-After when Stripe is rate-limiting (a retry may resume the checkout)", async () => {
    h.sandbox.injectFailure("checkout.sessions.create", { kind: "rate_limited" });
    const res = await fetch(`${h.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus-503",
        email: "b@example.com",
        items: [{ sku: "TEE", quantity: 1 }],
      }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("service_unavailable");
  });

  describe("with an Idempotency-Key (the key's lookup and the products in one read)", () => {
    const postKeyed = async (key: string, body: unknown) => {
      const res = await fetch(`${h.url}/api/checkout`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(body),
      });
      return {
        status: res.status,
        body: (await res.json()) as { error?: { code: string; message: string; details?: unknown } },
      };
    };
    /** Everything a checkout could write, and the stock it could take. */
    const written = async () => ({
      orders: await h.db.order.count(),
      requests: await h.db.checkoutRequest.count(),
      holds: await h.db.stockHold.count(),
      entries: await h.db.orderTimelineEntry.count(),
      stock: (await h.db.product.findMany({ orderBy: { sku: "asc" } })).map((p) => [p.sku, p.stockOnHand]),
    });

    it("an unknown SKU: 400 unknown_sku naming it, nothing written, the key still free", async () => {
      const before = await written();
      const res = await postKeyed("key-unknown-sku", {
        customerId: "cus-keyed-unknown",
        email: "k@example.com",
        items: [
          { sku: "MUG", quantity: 1 },
          { sku: "NOPE-KEYED", quantity: 1 },
        ],
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        code: "unknown_sku",
        message: "Unknown SKU: NOPE-KEYED",
        details: { skus: ["NOPE-KEYED"] },
      });
      expect(await written()).toEqual(before);

      // The key took nothing: the same key with a good cart checks out.
      const good = await postKeyed("key-unknown-sku", {
        customerId: "cus-keyed-unknown",
        email: "k@example.com",
        items: [{ sku: "MUG", quantity: 1 }],
      });
      expect(good.status).toBe(201);
    });

    it("an archived product: 409 product_unavailable naming it, nothing written", async () => {
      await h.db.product.create({
        data: {
          sku: "OLD-KEYED",
          name: "Old print",
          unitPrice: 700,
          currency: "usd",
          stockOnHand: 5,
          archivedAt: new Date(),
        },
      });
      const before = await written();
      const res = await postKeyed("key-archived", {
        customerId: "cus-keyed-archived",
        email: "k@example.com",
        items: [{ sku: "OLD-KEYED", quantity: 1 }],
      });
      expect(res.status).toBe(409);
      expect(res.body.error).toEqual({
        code: "product_unavailable",
        message: "No longer on sale: OLD-KEYED",
        details: { skus: ["OLD-KEYED"] },
      });
      expect(await written()).toEqual(before);
    });

    it("a repeat of a keyed checkout answers with the same order and session", async () => {
      const body = {
        customerId: "cus-keyed-repeat",
        email: "k@example.com",
        items: [{ sku: "TEE", quantity: 2 }],
      };
      const first = await postKeyed("key-repeat", body);
      expect(first.status).toBe(201);
      const before = await written();
      const again = await postKeyed("key-repeat", body);
      expect(again).toEqual(first);
      expect(await written()).toEqual(before);
    });
  });
});
