import Stripe from "stripe";
import { rateTableSchema } from "../../src/shipping/rate-table";
import { IntakeHarness } from "./intake-harness";

/**
 * Issue 39: a total under Stripe's minimum charge is a 4xx at POST /api/checkout that creates
 * nothing (src/payments/minimum-charge.ts), and Stripe's own refusal is a 4xx too.
 */
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

describe("checkout under Stripe's minimum charge", () => {
  let h: IntakeHarness;
  /** Set: the service's next session create is refused by "Stripe" as too small. */
  let refuseNextAsTooSmall = false;
  beforeAll(async () => {
    h = await IntakeHarness.start({
      serviceStripe: (stripe) => {
        const sessions = stripe.checkout.sessions;
        const create = sessions.create.bind(sessions);
        sessions.create = ((...args: Parameters<typeof create>) => {
          if (!refuseNextAsTooSmall) return create(...args);
          refuseNextAsTooSmall = false;
          return Promise.reject(
            new Stripe.errors.StripeInvalidRequestError({
              type: "invalid_request_error",
              code: "amount_too_small",
              message: "The Checkout Session's total amount due must add up to at least $0.50 usd",
            }),
          );
        }) as typeof sessions.create;
        return stripe;
      },
    });
    await h.db.product.createMany({
      data: [
        { sku: "STICKER", name: "Sticker", unitPrice: 25, currency: "usd", stockOnHand: 40 },
        { sku: "PIN", name: "Enamel pin", unitPrice: 30, currency: "gbp", stockOnHand: 40 },
      ],
    });
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
  const stockOf = async (sku: string) =>
    (await h.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;

  it("refuses a cart under the currency's minimum: 422 amount_too_small naming it, nothing written, Stripe not asked", async () => {
    const creates = sessionCreates().length;
    const stock = await stockOf("STICKER");
    const res = await post(h.url, {
      customerId: "cus-tiny",
      email: "ada@example.com",
      items: [{ sku: "STICKER", quantity: 1 }],
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: {
        code: "amount_too_small",
        message: expect.stringContaining("0.50 USD"),
        details: { minimum: 50, currency: "usd", amount: 25 },
      },
    });
    expect(await h.db.order.count({ where: { customerId: "cus-tiny" } })).toBe(0);
    expect(await h.db.checkoutRequest.count({ where: { customerId: "cus-tiny" } })).toBe(0);
    expect(await h.db.stockHold.count({ where: { sku: "STICKER" } })).toBe(0);
    expect(await stockOf("STICKER")).toBe(stock);
    expect(sessionCreates()).toHaveLength(creates);
  });

  it("takes each currency's own minimum: 30 pence is enough in GBP, 25 cents is not in USD", async () => {
    const res = await post(h.url, {
      customerId: "cus-pence",
      email: "ada@example.com",
      items: [{ sku: "PIN", quantity: 1 }],
    });
    expect(res.status).toBe(201);
  });

  it("accepts exactly the minimum", async () => {
    const res = await post(h.url, {
      customerId: "cus-fifty",
      email: "ada@example.com",
      items: [{ sku: "STICKER", quantity: 2 }],
    });
    expect(res.status).toBe(201);
    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session.amount_total).toBe(50);
  });

  it("counts the shipping option Stripe preselects: a small cart with paid shipping is over the minimum", async () => {
    const { url } = await h.anotherInstanceWith({ shippingRates: { table, itemWeightOz: 1 } });
    const res = await post(url, {
      customerId: "cus-tiny-shipped",
      email: "ada@example.com",
      items: [{ sku: "STICKER", quantity: 1 }],
      destination: { country: "US", region: "NY" },
    });
    expect(res.status).toBe(201);
    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session.amount_total).toBe(525);
  });

  it("answers Stripe's own amount_too_small refusal with 422 amount_too_small, not 503; the order is abandoned", async () => {
    refuseNextAsTooSmall = true;
    const res = await post(h.url, {
      customerId: "cus-refused-small",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 1 }],
    });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: { code: "amount_too_small", message: expect.stringContaining("at least") },
    });
    const orders = await h.db.order.findMany({ where: { customerId: "cus-refused-small" } });
    expect(orders).toHaveLength(1);
    expect(orders[0]?.status).toBe("expired");
    expect(await h.db.stockHold.count({ where: { orderId: orders[0]?.id, status: "held" } })).toBe(0);
  });
});
