import { defined } from "../support/defined";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * Issue 39's live carrier rates, through the whole service in this jest project's engine mode:
 * POST /api/checkout with a destination quotes EasyPost's stand-in (the cheapest and the fastest,
 * +10 %, up to 50 cents); the customer picks one on the pay page; the run buys the label at that
 * carrier service, records what it cost on the shipment and beside the quote (timeline entry and
 * console). Without a postal code the shop's rate table is offered, and its option ships as it says.
 */
describe("live carrier rates at checkout: quoted, chosen, the label bought at that service and its cost recorded", () => {
  let h: WorkflowHarness;
  const table = {
    currency: "usd",
    zones: [
      {
        name: "United States",
        destinations: [{ country: "US" }],
        rates: [
          {
            id: "standard",
            displayName: "Standard",
            pricing: { type: "flat", amount: 600 },
            carrierService: { carrier: "UPS", service: "Ground" },
          },
        ],
      },
    ],
  };
  const nyAddress = {
    name: "Ada Lovelace",
    address: { line1: "1 Main St", city: "New York", state: "NY", postal_code: "10001", country: "US" },
  };

  beforeAll(async () => {
    h = await WorkflowHarness.start({
      env: {
        CHECKOUT_LIVE_RATES: "cheapest,fastest",
        CHECKOUT_LIVE_RATES_MARKUP_PERCENT: "10",
        CHECKOUT_LIVE_RATES_ROUND_UP_TO: "50",
        SHIPPING_RATE_TABLE: JSON.stringify(table),
      },
    });
    // Stripe's webhook reaches the service: the intake records the money and places the order.
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
    await h.addProduct("LR-MUG", 20, 1299);
  });
  afterAll(() => h.close());

  /** Runs the engine round by round until the order has shipped: a state, never a duration. */
  const untilShipped = async (orderId: string) => {
    for (let round = 0; round < 40; round++) {
      if ((await h.order(orderId)).status === "shipped") return;
      await h.settle(1);
    }
    throw new Error(`order ${orderId} never shipped (${(await h.order(orderId)).status})`);
  };
  const checkout = async (customerId: string, destination: Record<string, string>) => {
    const res = await fetch(`${h.appUrl}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId,
        email: "ada@example.com",
        items: [{ sku: "LR-MUG", quantity: 2 }],
        destination,
      }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { orderId: string; checkoutSessionId: string };
  };
  const optionsOf = async (checkoutSessionId: string) => {
    const session = await h.services.stripe.checkout.sessions.retrieve(checkoutSessionId);
    return Promise.all(
      session.shipping_options.map((option) =>
        h.services.stripe.shippingRates.retrieve(String(option.shipping_rate)),
      ),
    );
  };
  const labelVsQuote = async (orderId: string) =>
    (await h.db.orderTimelineEntry.findMany({ where: { orderId, kind: "shipping-label-vs-quote" } })).map(
      (entry) => entry.detail,
    );
  const consolePage = async (orderId: string) => {
    const login = await fetch(`${h.appUrl}/ops/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: adminToken }).toString(),
      redirect: "manual",
    });
    const cookie = String(login.headers.get("set-cookie")).split(";")[0] ?? "";
    const page = await fetch(`${h.appUrl}/ops/orders/${orderId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    return page.text();
  };

  it("a destination with a postal code: EasyPost's cheapest and fastest offered; the fastest chosen is the label bought, its cost on the shipment beside the quote", async () => {
    const before = h.easyPost.shipments().length;
    const { orderId, checkoutSessionId } = await checkout("cus_live_fast", {
      country: "US",
      region: "NY",
      postalCode: "10001",
    });
    // The quote: one rating shipment (one parcel of 2 × 16 oz), never bought.
    const [rating] = h.easyPost.shipments().slice(before);
    expect(rating).toMatchObject({ reference: null, postage_label: null, parcel: { weight: 32 } });
    const express = defined(rating?.rates.find((r) => r.carrier === "USPS" && r.service === "Express"));
    const expressQuote = Math.ceil(Math.ceil((Math.round(Number(express.rate) * 100) * 110) / 100) / 50) * 50;

    const options = await optionsOf(checkoutSessionId);
    expect(options.map((rate) => rate.metadata)).toEqual([
      { rateId: "live-usps-groundadvantage", carrier: "USPS", service: "GroundAdvantage" },
      { rateId: "live-usps-express", carrier: "USPS", service: "Express" },
    ]);
    const fastest = defined(options[1]);
    expect(fastest).toMatchObject({
      display_name: "USPS Express",
      fixed_amount: { amount: expressQuote, currency: "usd" },
      delivery_estimate: {
        minimum: { unit: "business_day", value: 1 },
        maximum: { unit: "business_day", value: 1 },
      },
    });

    // The customer picks the fastest on the pay page; Stripe's webhook places the order.
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      shippingRate: fastest.id,
      shipping: nyAddress,
    });
    await untilShipped(orderId);

    const order = await h.order(orderId);
    expect(order.moneyBreakdown).toMatchObject({ shipping: expressQuote, total: 2 * 1299 + expressQuote });
    // The label is bought at the service the customer paid for, on a shipment of its own.
    const [label] = h.easyPost.shipments().filter((s) => s.reference === `order-${orderId}`);
    expect(label?.selected_rate).toMatchObject({ carrier: "USPS", service: "Express" });
    const labelCost = Math.round(Number(label?.selected_rate?.rate) * 100);
    // Its cost, recorded on the shipment row.
    expect(order.shipments.map((s) => [s.service, s.labelCost, s.labelCurrency])).toEqual([
      ["Express", labelCost, "usd"],
    ]);
    expect(await labelVsQuote(orderId)).toEqual([
      {
        chosen: {
          rateId: "live-usps-express",
          displayName: "USPS Express",
          carrier: "USPS",
          service: "Express",
        },
        bought: [{ carrier: "USPS", service: "Express", labelAmount: labelCost }],
        fallback: false,
        customerPaid: expressQuote,
        labelCost,
        difference: expressQuote - labelCost,
      },
    ]);
    // Ops see the label's cost beside what the customer paid for shipping.
    const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;
    const page = await consolePage(orderId);
    expect(page).toContain(`label ${usd(labelCost)}`);
    expect(page.replace(/<[^>]+>/g, "")).toContain(
      `Labels cost ${usd(labelCost)}; the customer paid ${usd(expressQuote)} for shipping (USPS Express): difference ${usd(expressQuote - labelCost)}`,
    );
    // The admin API carries it too.
    const details = (await (
      await fetch(`${h.appUrl}/api/orders/${orderId}`, { headers: { authorization: `Bearer ${adminToken}` } })
    ).json()) as { shipments: { labelCost: number; labelCurrency: string }[] };
    expect(details.shipments.map((s) => [s.labelCost, s.labelCurrency])).toEqual([[labelCost, "usd"]]);
  });

  it("no postal code: the shop's rate table is offered, and its option ships at the service it names", async () => {
    const before = h.easyPost.shipments().length;
    const { orderId, checkoutSessionId } = await checkout("cus_live_table", { country: "US", region: "NY" });
    // EasyPost was not asked.
    expect(h.easyPost.shipments()).toHaveLength(before);
    const options = await optionsOf(checkoutSessionId);
    expect(options.map((rate) => [rate.display_name, rate.fixed_amount?.amount, rate.metadata])).toEqual([
      ["Standard", 600, { rateId: "standard", carrier: "UPS", service: "Ground" }],
    ]);

    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping: nyAddress });
    await untilShipped(orderId);
    const [label] = h.easyPost.shipments().filter((s) => s.reference === `order-${orderId}`);
    expect(label?.selected_rate).toMatchObject({ carrier: "UPS", service: "Ground" });
    const labelCost = Math.round(Number(label?.selected_rate?.rate) * 100);
    expect((await h.order(orderId)).shipments.map((s) => [s.labelCost, s.labelCurrency])).toEqual([
      [labelCost, "usd"],
    ]);
    expect(await labelVsQuote(orderId)).toMatchObject([
      { chosen: { rateId: "standard" }, fallback: false, customerPaid: 600, labelCost },
    ]);
  });
});
