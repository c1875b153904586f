import type Stripe from "stripe";
import { breakdownExpansions, storedBreakdown, unitsWorth } from "../../src/payments/money-breakdown";
import { rateTableSchema } from "../../src/shipping/rate-table";
import { eventually } from "../support/eventually";
import { IntakeHarness } from "./intake-harness";

const table = rateTableSchema.parse({
  currency: "usd",
  zones: [
    {
      name: "United States",
      destinations: [{ country: "US" }],
      rates: [
        { id: "standard", displayName: "Standard", pricing: { type: "flat", amount: 500 } },
        { id: "express", displayName: "Express", pricing: { type: "flat", amount: 1500 } },
      ],
    },
  ],
});

/** A shop that offers discount codes and Stripe Tax (its CHECKOUT_* settings, decision 0204). */
const codesAndTax = {
  automaticTax: true,
  taxBehavior: "exclusive" as const,
  defaultTaxCode: "txcd_99999999",
  allowPromotionCodes: true,
};

const newYork = {
  name: "Ada Lovelace",
  phone: "+12125550123",
  address: { line1: "1 Main St", city: "New York", state: "NY", postal_code: "10001", country: "US" },
};

describe("the money breakdown is recorded once from Stripe when the paid checkout is taken in", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start({
      shippingRates: { table, itemWeightOz: 16 },
      pricing: codesAndTax,
    });
    const coupon = await h.stripe.coupons.create({ percent_off: 15, duration: "once" });
    await h.stripe.promotionCodes.create({
      promotion: { type: "coupon", coupon: coupon.id },
      code: "SAVE15",
    });
  });
  afterAll(() => h.close());

  const checkout = async (items: { sku: string; quantity: number }[], customerId: string) => {
    const res = await fetch(`${h.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId,
        email: "ada@example.com",
        items,
        destination: { country: "US", region: "NY", postalCode: "10001" },
      }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { orderId: string; checkoutSessionId: string };
  };

  it("an order with a discount code, a paid shipping option and tax: the breakdown equals Stripe's session to the cent", async () => {
    const { orderId, checkoutSessionId } = await checkout(
      [
        { sku: "MUG", quantity: 3 },
        { sku: "TEE", quantity: 1 },
      ],
      "cus-money",
    );
    expect(h.sandbox.applyPromotionCode(checkoutSessionId, "SAVE15").error).toBeNull();
    const open = await h.stripe.checkout.sessions.retrieve(checkoutSessionId);
    const express = open.shipping_options[1]?.shipping_rate as string;
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      shipping: newYork,
      shippingRate: express,
    });
    await eventually("the order is authorized", async () => (await h.order(orderId)).status === "authorized");

    const session = await h.stripe.checkout.sessions.retrieve(checkoutSessionId, {
      expand: [...breakdownExpansions],
    });
    // Everything is charged: 3 × 12.00 + 25.00 = 61.00, 15% off, Express 15.00, New York's 4% on
    // the discounted goods and on the shipping.
    expect(session.total_details).toMatchObject({ amount_discount: 915, amount_shipping: 1500 });
    expect(session.total_details?.amount_tax).toBeGreaterThan(0);
    const order = await h.order(orderId);
    const money = storedBreakdown(order.moneyBreakdown);
    expect(money).toEqual({
      currency: "usd",
      subtotal: session.amount_subtotal,
      shipping: session.total_details?.amount_shipping,
      discount: session.total_details?.amount_discount,
      tax: session.total_details?.amount_tax,
      total: session.amount_total,
      shippingRate: {
        shippingRateId: express,
        displayName: "Express",
        metadata: { rateId: "express" },
        amountSubtotal: session.shipping_cost?.amount_subtotal,
        amountTax: session.shipping_cost?.amount_tax,
        amountTotal: session.shipping_cost?.amount_total,
      },
      lines: (session.line_items?.data ?? []).map((item) => ({
        sku: (item.price?.product as Stripe.Product).metadata.sku,
        quantity: item.quantity,
        amountSubtotal: item.amount_subtotal,
        amountDiscount: item.amount_discount,
        amountTax: item.amount_tax,
        amountTotal: item.amount_total,
      })),
    });
    expect(money?.lines.map((line) => line.sku).sort()).toEqual(["MUG", "TEE"]);
    // The order's total is what Stripe charged, and the workflow is told so.
    expect(order.total).toBe(session.amount_total);
    expect(order.total).toBe(6100 - 915 + 1500 + (session.total_details?.amount_tax ?? Number.NaN));
    expect(h.placedEvents(orderId)).toHaveLength(1);
    expect(h.placedEvents(orderId)[0]?.data).toMatchObject({ total: session.amount_total });
    expect(order.attentionReason).toBeNull();
    // Each line's units are worth its total exactly; one mug of three, a third of the mugs' line.
    const mugs = money?.lines.find((line) => line.sku === "MUG");
    expect(mugs && unitsWorth(mugs, 3)).toBe(mugs?.amountTotal);
    expect(mugs && unitsWorth(mugs, 1)).toBe(Math.floor((mugs?.amountTotal ?? 0) / 3));
  });

  it("tax-inclusive prices: the tax Stripe found inside them is recorded per line, marked so, and the total is the prices less the discount plus shipping", async () => {
    const inclusive = await h.anotherInstanceWith({
      shippingRates: { table, itemWeightOz: 16 },
      pricing: { ...codesAndTax, taxBehavior: "inclusive" },
    });
    const res = await fetch(`${inclusive.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus-inclusive",
        email: "ada@example.com",
        items: [
          { sku: "MUG", quantity: 3 },
          { sku: "TEE", quantity: 1 },
        ],
        destination: { country: "US", region: "NY", postalCode: "10001" },
      }),
    });
    expect(res.status).toBe(201);
    const { orderId, checkoutSessionId } = (await res.json()) as {
      orderId: string;
      checkoutSessionId: string;
    };
    expect(h.sandbox.applyPromotionCode(checkoutSessionId, "SAVE15").error).toBeNull();
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping: newYork });
    await eventually("the order is authorized", async () => (await h.order(orderId)).status === "authorized");

    const session = await h.stripe.checkout.sessions.retrieve(checkoutSessionId, {
      expand: [...breakdownExpansions],
    });
    // 61.00 less 15 % (9.15), Standard 5.00; New York's 4 % is inside the goods and the shipping.
    expect(session).toMatchObject({
      amount_subtotal: 6100,
      amount_total: 6100 - 915 + 500,
      total_details: { amount_discount: 915, amount_shipping: 500 },
    });
    const order = await h.order(orderId);
    const money = storedBreakdown(order.moneyBreakdown);
    expect(money?.tax).toBe(session.total_details?.amount_tax);
    expect(money?.tax).toBeGreaterThan(0);
    expect(money?.lines).toEqual(
      (session.line_items?.data ?? []).map((item) => ({
        sku: (item.price?.product as Stripe.Product).metadata.sku,
        quantity: item.quantity,
        amountSubtotal: item.amount_subtotal,
        amountDiscount: item.amount_discount,
        amountTax: item.amount_tax,
        amountTotal: item.amount_subtotal - item.amount_discount,
        taxInclusive: true,
      })),
    );
    expect(order.total).toBe(session.amount_total);
    expect(order.attentionReason).toBeNull();
  });

  it("an order with nothing but its lines records zeros beside them and keeps its total", async () => {
    const { orderId, checkoutSessionId } = await checkout([{ sku: "POSTER", quantity: 1 }], "cus-plain");
    // Tax for a destination the stand-in's table does not tax, and no code: shipping only.
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      shipping: {
        ...newYork,
        address: { ...newYork.address, state: "OR", city: "Portland", postal_code: "97201" },
      },
    });
    await eventually("the order is authorized", async () => (await h.order(orderId)).status === "authorized");
    const order = await h.order(orderId);
    expect(storedBreakdown(order.moneyBreakdown)).toMatchObject({
      subtotal: 1800,
      discount: 0,
      tax: 0,
      shipping: 500,
      total: 2300,
      lines: [
        {
          sku: "POSTER",
          quantity: 1,
          amountSubtotal: 1800,
          amountDiscount: 0,
          amountTax: 0,
          amountTotal: 1800,
        },
      ],
    });
    expect(order.total).toBe(2300);
  });

  it("a session whose figures are not the order's lines is held for ops, and nothing is recorded", async () => {
    const { orderId, checkoutSessionId } = await checkout([{ sku: "MUG", quantity: 1 }], "cus-tampered");
    // The order's lines say otherwise than Stripe's session (the row edited, a confused session).
    await h.db.order.update({ where: { id: orderId }, data: { total: 999 } });
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping: newYork });
    await eventually(
      "the order is held for ops",
      async () => (await h.order(orderId)).attentionReason !== null,
    );
    const order = await h.order(orderId);
    expect(order).toMatchObject({ status: "pending", total: 999, moneyBreakdown: null });
    expect(order.attentionReason).toMatch(/lines' amount is 1200, the order's total 999/);
  });
});
