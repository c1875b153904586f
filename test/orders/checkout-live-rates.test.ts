import { createEasyPostSandbox, type EasyPostSandbox } from "../../src/dev/easypost-sandbox";
import { createLogger } from "../../src/logger";
import type { CheckoutServiceLiveRates } from "../../src/orders/checkout/checkout-service";
import { lazyEasyPostClient } from "../../src/shipping/easypost-carrier";
import { createEasyPostRateQuoter } from "../../src/shipping/live-rates";
import { rateTableSchema } from "../../src/shipping/rate-table";
import { IntakeHarness } from "./intake-harness";

/** The shop's table: the US only, one flat rate (the fallback). */
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
const itemWeightOz = 16;
const warehouse = {
  name: "Shop Warehouse",
  line1: "417 Montgomery St",
  city: "San Francisco",
  state: "CA",
  postalCode: "94104",
  country: "US",
};

/** The shop's price for a carrier's, written out here: +10 %, then up to the next 50 cents. */
const shopPrice = (carrierCents: number) => Math.ceil(Math.ceil((carrierCents * 110) / 100) / 50) * 50;

interface Harnesses {
  h: IntakeHarness;
  easyPost: EasyPostSandbox;
  observed: string[];
}

async function startWith(options: { table: boolean }): Promise<Harnesses> {
  const easyPost = createEasyPostSandbox({
    webhookSecret: "easypost_live_rates_secret",
    logger: createLogger({ level: "silent" }),
  });
  await easyPost.listen(0, "127.0.0.1");
  const observed: string[] = [];
  const liveRates: CheckoutServiceLiveRates = {
    quoter: createEasyPostRateQuoter({
      client: lazyEasyPostClient({ apiKey: "EZTK_live_rates", apiBase: easyPost.apiBase ?? "" }),
      warehouse,
    }),
    policy: { picks: ["cheapest", "fastest"], markupPercent: 10, roundUpTo: 50 },
    itemWeightOz,
    observe: (source, fallback) => observed.push(fallback ? `${source}:${fallback}` : source),
  };
  const h = await IntakeHarness.start({
    liveRates,
    ...(options.table ? { shippingRates: { table, itemWeightOz } } : {}),
  });
  return { h, easyPost, observed };
}

const post = async (h: IntakeHarness, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${h.url}/api/checkout`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { code: string }; [key: string]: unknown },
  };
};
const nothingFor = async (h: IntakeHarness, customerId: string) => ({
  orders: await h.db.order.count({ where: { customerId } }),
  checkoutRequests: await h.db.checkoutRequest.count({ where: { customerId } }),
});
const ratingCalls = (easyPost: EasyPostSandbox) =>
  easyPost.requests.filter((r) => r.endpoint === "shipments.create").length;

describe("checkout with live carrier rates (CHECKOUT_LIVE_RATES=cheapest,fastest, 10 % markup, up to 50 cents)", () => {
  let x: Harnesses;
  beforeAll(async () => {
    x = await startWith({ table: true });
  });
  afterAll(async () => {
    await x.h.close();
    await x.easyPost.close();
  });

  it("quotes EasyPost's rates for the destination: the cheapest and the fastest, marked up, with their delivery estimates and carrier service", async () => {
    const { h, easyPost } = x;
    const before = easyPost.shipments().length;
    const destination = { country: "US", region: "NY", postalCode: "10001" };
    const res = await post(h, {
      customerId: "cus-live",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 2 }],
      destination,
    });
    expect(res.status).toBe(201);

    // One rating shipment for the one parcel (2 × 16 oz), to the postal code, never bought.
    const rated = easyPost.shipments().slice(before);
    expect(rated).toHaveLength(1);
    const [shipment] = rated;
    expect(shipment).toMatchObject({
      reference: null,
      postage_label: null,
      parcel: { weight: 2 * itemWeightOz },
      to_address: { zip: "10001", state: "NY", country: "US" },
    });
    // Independently of the service's policy code: the lowest price; the fewest days, then the price.
    const rates = (shipment?.rates ?? []).map((r) => ({
      carrier: r.carrier,
      service: r.service,
      cents: Math.round(Number(r.rate) * 100),
      days: r.delivery_days as number,
    }));
    const cheapest = [...rates].sort((a, b) => a.cents - b.cents)[0];
    const fastest = [...rates].sort((a, b) => a.days - b.days || a.cents - b.cents)[0];
    expect(cheapest).toMatchObject({ carrier: "USPS", service: "GroundAdvantage" });
    expect(fastest).toMatchObject({ carrier: "USPS", service: "Express", days: 1 });

    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    const offered = await Promise.all(
      session.shipping_options.map((option) => h.stripe.shippingRates.retrieve(String(option.shipping_rate))),
    );
    expect(
      offered.map((rate) => ({
        name: rate.display_name,
        amount: rate.fixed_amount?.amount,
        estimate: rate.delivery_estimate,
        metadata: rate.metadata,
      })),
    ).toEqual(
      [cheapest, fastest].map((rate) => ({
        name: `${rate?.carrier} ${rate?.service}`,
        amount: shopPrice(rate?.cents ?? Number.NaN),
        estimate: {
          minimum: { unit: "business_day", value: rate?.days },
          maximum: { unit: "business_day", value: rate?.days },
        },
        metadata: {
          rateId: `live-${rate?.carrier}-${rate?.service}`.toLowerCase(),
          carrier: rate?.carrier,
          service: rate?.service,
        },
      })),
    );
    // The cheapest is preselected.
    expect(session.amount_total).toBe(2 * 1200 + shopPrice(cheapest?.cents ?? Number.NaN));

    // Stored with the checkout request, as the destination is: a rebuilt request is the same.
    const stored = await h.db.checkoutRequest.findUniqueOrThrow({
      where: { orderId: String(res.body.orderId) },
    });
    expect(stored.destination).toEqual(destination);
    expect(stored.shippingOptions).toEqual(
      [cheapest, fastest].map((rate) => ({
        rateId: `live-${rate?.carrier}-${rate?.service}`.toLowerCase(),
        displayName: `${rate?.carrier} ${rate?.service}`,
        amount: shopPrice(rate?.cents ?? Number.NaN),
        currency: "usd",
        deliveryEstimate: {
          minimum: { unit: "business_day", value: rate?.days },
          maximum: { unit: "business_day", value: rate?.days },
        },
        carrierService: { carrier: rate?.carrier, service: rate?.service },
      })),
    );
    expect(x.observed).toContain("live");
  });

  it("uses the rate table when the destination has no postal code to rate", async () => {
    const { h, easyPost } = x;
    const calls = ratingCalls(easyPost);
    const res = await post(h, {
      customerId: "cus-no-postal",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 1 }],
      destination: { country: "US", region: "CA" },
    });
    expect(res.status).toBe(201);
    expect(ratingCalls(easyPost)).toBe(calls);
    const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    const [rate] = await Promise.all(
      session.shipping_options.map((option) => h.stripe.shippingRates.retrieve(String(option.shipping_rate))),
    );
    expect(session.shipping_options).toHaveLength(1);
    expect(rate).toMatchObject({ display_name: "Standard", fixed_amount: { amount: 500 } });
  });

  it("refuses a checkout without a destination (422) and creates nothing, as the rate table does", async () => {
    const res = await post(x.h, {
      customerId: "cus-live-nowhere",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 1 }],
    });
    expect(res).toMatchObject({ status: 422, body: { error: { code: "shipping_destination_required" } } });
    expect(await nothingFor(x.h, "cus-live-nowhere")).toEqual({ orders: 0, checkoutRequests: 0 });
  });

  it("falls back to the rate table when EasyPost is down, and says so (a warning, the fallback counted)", async () => {
    const { h, easyPost } = x;
    easyPost.injectFailure("shipments.create", { kind: "server_error" }, 10);
    try {
      const res = await post(h, {
        customerId: "cus-live-down",
        email: "ada@example.com",
        items: [{ sku: "MUG", quantity: 1 }],
        destination: { country: "US", postalCode: "97201" },
      });
      expect(res.status).toBe(201);
      const session = await h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
      expect(session.shipping_options.map((option) => option.shipping_amount)).toEqual([500]);
    } finally {
      easyPost.clearFailures();
    }
    expect(x.observed).toContain("table:carrier_unavailable");
    expect(h.warnings.some((line) => line.includes("live carrier rates unavailable"))).toBe(true);
  });

  it("refuses a destination EasyPost cannot rate and the table does not cover: 422, nothing created", async () => {
    const { h, easyPost } = x;
    const creates = h.sandbox.requests.filter((r) => r.endpoint === "checkout.sessions.create").length;
    const stock = (await h.db.product.findUniqueOrThrow({ where: { sku: "MUG" } })).stockOnHand;
    const before = easyPost.shipments().length;
    const res = await post(h, {
      customerId: "cus-live-unratable",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 1 }],
      destination: { country: "KP", postalCode: "999093" },
    });
    expect(res).toMatchObject({ status: 422, body: { error: { code: "shipping_destination_not_covered" } } });
    // EasyPost was asked, and answered with no rates (a rate_error per carrier).
    const [asked] = easyPost.shipments().slice(before);
    expect(asked?.rates).toEqual([]);
    expect(asked?.messages.map((m) => m.type)).toEqual(["rate_error", "rate_error", "rate_error"]);
    expect(x.observed).toContain("table:no_live_rate");
    expect(await nothingFor(h, "cus-live-unratable")).toEqual({ orders: 0, checkoutRequests: 0 });
    expect(h.sandbox.requests.filter((r) => r.endpoint === "checkout.sessions.create")).toHaveLength(creates);
    expect((await h.db.product.findUniqueOrThrow({ where: { sku: "MUG" } })).stockOnHand).toBe(stock);
  });

  it("a retry with the same Idempotency-Key and the sweep's rebuild send Stripe the stored quote: identical, never re-quoted", async () => {
    const { h, easyPost } = x;
    const body = {
      customerId: "cus-live-half-made",
      email: "ada@example.com",
      items: [{ sku: "TEE", quantity: 1 }],
      destination: { country: "US", postalCode: "94103" },
    };
    const first = await post(h, body, { "Idempotency-Key": "live-1" });
    expect(first.status).toBe(201);
    const orderId = String(first.body.orderId);
    const calls = ratingCalls(easyPost);
    const again = await post(h, body, { "Idempotency-Key": "live-1" });
    expect(again).toMatchObject({
      status: 201,
      body: { orderId, checkoutSessionId: first.body.checkoutSessionId },
    });

    // As if the session was made at Stripe but its attach never committed here.
    await h.db.order.update({ where: { id: orderId }, data: { checkoutSessionId: null } });
    const later = new Date(Date.now() + 3 * 60_000);
    expect(await h.checkoutSweep.expireHalfMadeOrders(later)).toMatchObject({ expired: 1, failed: 0 });
    expect(ratingCalls(easyPost)).toBe(calls);
    const creates = h.sandbox.requests.filter(
      (r) => r.endpoint === "checkout.sessions.create" && r.params.client_reference_id === orderId,
    );
    expect(creates).toHaveLength(3);
    // Stripe refuses a key replayed with other parameters (idempotency_error); these are the same.
    expect(creates[1]?.params).toEqual(creates[0]?.params);
    expect(creates[2]?.params).toEqual(creates[0]?.params);
    expect(creates.every((r) => r.status === 200)).toBe(true);
    const options = (
      creates[0]?.params as { shipping_options?: { shipping_rate_data?: { metadata?: unknown } }[] }
    ).shipping_options;
    expect(options?.map((option) => option.shipping_rate_data?.metadata)).toEqual([
      { rateId: "live-usps-groundadvantage", carrier: "USPS", service: "GroundAdvantage" },
      { rateId: "live-usps-express", carrier: "USPS", service: "Express" },
    ]);
    expect(await h.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "expired",
    });
  });
});

describe("live carrier rates without a rate table to fall back on", () => {
  let x: Harnesses;
  beforeAll(async () => {
    x = await startWith({ table: false });
  });
  afterAll(async () => {
    await x.h.close();
    await x.easyPost.close();
  });

  it.each([
    ["no postal code", "shipping_destination_required", 422, { country: "US" }, false],
    [
      "an unratable destination",
      "shipping_destination_not_covered",
      422,
      { country: "SY", postalCode: "1" },
      false,
    ],
    ["EasyPost down", "service_unavailable", 503, { country: "US", postalCode: "10001" }, true],
  ] as const)("refuses %s (%s) and creates nothing", async (_what, code, status, destination, down) => {
    const customerId = `cus-no-table-${code}`;
    if (down) x.easyPost.injectFailure("shipments.create", { kind: "server_error" }, 10);
    try {
      const res = await post(x.h, {
        customerId,
        email: "ada@example.com",
        items: [{ sku: "MUG", quantity: 1 }],
        destination,
      });
      expect(res).toMatchObject({ status, body: { error: { code } } });
    } finally {
      x.easyPost.clearFailures();
    }
    expect(await nothingFor(x.h, customerId)).toEqual({ orders: 0, checkoutRequests: 0 });
  });

  it("quotes live rates alone when the destination rates", async () => {
    const res = await post(x.h, {
      customerId: "cus-no-table-live",
      email: "ada@example.com",
      items: [{ sku: "MUG", quantity: 1 }],
      destination: { country: "US", postalCode: "10001" },
    });
    expect(res.status).toBe(201);
    const session = await x.h.stripe.checkout.sessions.retrieve(String(res.body.checkoutSessionId));
    expect(session.shipping_options).toHaveLength(2);
  });
});
