import Stripe from "stripe";
import type { StripeSandbox } from "../../../src/dev/stripe-sandbox";
import fixtures from "../../../src/dev/stripe-sandbox/fixtures.json";
import { defined } from "../../support/defined";
import { sessionParams, startSandbox } from "./harness";

/**
 * What Checkout charges beyond the lines: shipping options, discounts, automatic tax and the
 * minimum charge, driven through the official client as the service drives Stripe.
 */
describe("Stripe sandbox: shipping, discounts, tax and totals on Checkout Sessions", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
  });
  afterAll(() => sandbox.close());

  // Two lines in USD: 2 × 12.50 and 1 × 9.90 = 34.90.
  const usd = (
    overrides: Partial<Stripe.Checkout.SessionCreateParams> = {},
  ): Stripe.Checkout.SessionCreateParams =>
    sessionParams({
      line_items: [
        { price_data: { currency: "usd", unit_amount: 1250, product_data: { name: "Mug" } }, quantity: 2 },
        { price_data: { currency: "usd", unit_amount: 990, product_data: { name: "Tea" } }, quantity: 1 },
      ],
      payment_intent_data: { capture_method: "manual" },
      ...overrides,
    });

  const ground: Stripe.Checkout.SessionCreateParams.ShippingOption = {
    shipping_rate_data: {
      type: "fixed_amount",
      display_name: "Ground",
      fixed_amount: { amount: 599, currency: "usd" },
      delivery_estimate: {
        minimum: { unit: "business_day", value: 3 },
        maximum: { unit: "business_day", value: 5 },
      },
    },
  };

  describe("shipping options", () => {
    it("makes a Shipping Rate of each inline option, preselects the first and counts it in the totals", async () => {
      const express = await stripe.shippingRates.create({
        display_name: "Express",
        type: "fixed_amount",
        fixed_amount: { amount: 1500, currency: "usd" },
      });
      expect(express).toMatchObject({ object: "shipping_rate", active: true, delivery_estimate: null });
      const session = await stripe.checkout.sessions.create(
        usd({ shipping_options: [ground, { shipping_rate: express.id }] }),
      );
      const [first, second] = defined(session.shipping_options);
      expect(first).toEqual({ shipping_amount: 599, shipping_rate: expect.stringMatching(/^shr_/) });
      expect(second).toEqual({ shipping_amount: 1500, shipping_rate: express.id });
      const groundRate = await stripe.shippingRates.retrieve(defined(first).shipping_rate as string);
      expect(groundRate).toMatchObject({
        display_name: "Ground",
        fixed_amount: { amount: 599, currency: "usd" },
        delivery_estimate: {
          minimum: { unit: "business_day", value: 3 },
          maximum: { unit: "business_day", value: 5 },
        },
        tax_behavior: "unspecified",
        type: "fixed_amount",
      });
      expect(session.shipping_cost).toEqual({
        amount_subtotal: 599,
        amount_tax: 0,
        amount_total: 599,
        shipping_rate: groundRate.id,
      });
      expect(session.total_details).toEqual({ amount_discount: 0, amount_shipping: 599, amount_tax: 0 });
      expect(session).toMatchObject({ amount_subtotal: 3490, amount_total: 3490 + 599 });
    });

    it("charges the option the customer picks and records where it goes", async () => {
      const express = await stripe.shippingRates.create({
        display_name: "Express",
        fixed_amount: { amount: 1500, currency: "usd" },
      });
      const session = await stripe.checkout.sessions.create(
        usd({
          shipping_options: [ground, { shipping_rate: express.id }],
          shipping_address_collection: { allowed_countries: ["US"] },
        }),
      );
      const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized", {
        deliver: false,
        shippingRate: express.id,
      });
      const paid = await stripe.checkout.sessions.retrieve(session.id);
      expect(paid.shipping_cost).toMatchObject({ amount_total: 1500, shipping_rate: express.id });
      expect(paid.amount_total).toBe(3490 + 1500);
      expect(defined(paymentIntent).amount).toBe(3490 + 1500);
      expect(paid.collected_information?.shipping_details?.address.country).toBe("US");
    });

    it("refuses a shipping rate that does not exist, in Stripe's words", async () => {
      const error = await stripe.checkout.sessions
        .create(usd({ shipping_options: [{ shipping_rate: "shr_missing" }] }))
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error).toMatchObject({
        code: "resource_missing",
        param: "shipping_options[0][shipping_rate]",
        message: "No such shipping_rate: 'shr_missing'",
      });
    });
  });

  describe("discounts", () => {
    it("takes a percent-off coupon off the lines, shared per line, never off shipping", async () => {
      const coupon = await stripe.coupons.create({ percent_off: 20, duration: "once" });
      const session = await stripe.checkout.sessions.create(
        usd({ discounts: [{ coupon: coupon.id }], shipping_options: [ground], expand: ["line_items"] }),
      );
      expect(session.discounts).toEqual([{ coupon: coupon.id, promotion_code: null }]);
      expect(session.total_details).toEqual({ amount_discount: 698, amount_shipping: 599, amount_tax: 0 });
      expect(session.amount_total).toBe(3490 - 698 + 599);
      expect(
        defined(session.line_items).data.map((line) => [
          line.amount_subtotal,
          line.amount_discount,
          line.amount_total,
        ]),
      ).toEqual([
        [2500, 500, 2000],
        [990, 198, 792],
      ]);
      const { data } = await stripe.checkout.sessions.listLineItems(session.id);
      expect(data.map((line) => line.amount_discount)).toEqual([500, 198]);
    });

    it("applies a promotion code passed in discounts, and counts its redemption once paid", async () => {
      const coupon = await stripe.coupons.create({ amount_off: 500, currency: "usd", duration: "once" });
      const promo = await stripe.promotionCodes.create({
        promotion: { type: "coupon", coupon: coupon.id },
        code: "SPRING5",
      });
      expect(promo).toMatchObject({ object: "promotion_code", active: true, code: "SPRING5" });
      const session = await stripe.checkout.sessions.create(
        usd({ discounts: [{ promotion_code: promo.id }] }),
      );
      expect(session.discounts).toEqual([{ coupon: coupon.id, promotion_code: promo.id }]);
      expect(session.amount_total).toBe(2990);
      await sandbox.completeCheckoutSession(session.id, "authorized", { deliver: false });
      expect((await stripe.promotionCodes.retrieve(promo.id)).times_redeemed).toBe(1);
      expect((await stripe.coupons.retrieve(coupon.id)).times_redeemed).toBe(1);
      const [listed] = (await stripe.promotionCodes.list({ code: "spring5" })).data;
      expect(listed?.id).toBe(promo.id);
    });

    it("refuses discounts together with allow_promotion_codes, as Stripe does", async () => {
      const coupon = await stripe.coupons.create({ percent_off: 10 });
      await expect(
        stripe.checkout.sessions.create(
          usd({ discounts: [{ coupon: coupon.id }], allow_promotion_codes: true }),
        ),
      ).rejects.toMatchObject({
        type: "StripeInvalidRequestError",
        message: "You may only specify one of these parameters: allow_promotion_codes, discounts.",
      });
    });

    it("refuses a coupon that does not exist", async () => {
      await expect(
        stripe.checkout.sessions.create(usd({ discounts: [{ coupon: "NOPE" }] })),
      ).rejects.toMatchObject({
        code: "resource_missing",
        param: "discounts[0][coupon]",
      });
    });

    it("takes codes and shipping choices over the control API too (npm start, browser tests)", async () => {
      const coupon = await stripe.coupons.create({ amount_off: 1000, currency: "usd" });
      await stripe.promotionCodes.create({
        promotion: { type: "coupon", coupon: coupon.id },
        code: "TENNER",
      });
      const express = await stripe.shippingRates.create({
        display_name: "Express",
        fixed_amount: { amount: 1500, currency: "usd" },
      });
      const session = await stripe.checkout.sessions.create(
        usd({ allow_promotion_codes: true, shipping_options: [ground, { shipping_rate: express.id }] }),
      );
      const control = (path: string, body: unknown) =>
        fetch(`${defined(sandbox.url)}/_sandbox/checkout/sessions/${session.id}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const refused = await control("/promotion_code", { code: "WRONG" });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "This code is invalid." });
      const applied = await control("/promotion_code", { code: "tenner" });
      expect(applied.status).toBe(200);
      const paid = await control("/complete", {
        outcome: "authorized",
        deliver: false,
        shippingRate: express.id,
      });
      expect(paid.status).toBe(200);
      const completed = await stripe.checkout.sessions.retrieve(session.id);
      expect(completed.amount_total).toBe(3490 - 1000 + 1500);
      expect(completed.shipping_cost?.shipping_rate).toBe(express.id);
    });

    it("lets the customer type a code on the page; an unknown, expired or inactive one gets the page's message", async () => {
      const coupon = await stripe.coupons.create({ percent_off: 25.5 });
      await stripe.promotionCodes.create({
        promotion: { type: "coupon", coupon: coupon.id },
        code: "FALL25",
      });
      const expiresAt = Math.floor(Date.now() / 1000) + 3600;
      await stripe.promotionCodes.create({
        promotion: { type: "coupon", coupon: coupon.id },
        code: "SOONGONE",
        expires_at: expiresAt,
      });
      await stripe.promotionCodes.create({
        promotion: { type: "coupon", coupon: coupon.id },
        code: "PAUSED",
        active: false,
      });
      const session = await stripe.checkout.sessions.create(usd({ allow_promotion_codes: true }));
      expect(session.allow_promotion_codes).toBe(true);

      expect(sandbox.applyPromotionCode(session.id, "NOSUCHCODE").error).toBe("This code is invalid.");
      expect(sandbox.applyPromotionCode(session.id, "paused").error).toBe("This code is invalid.");
      await sandbox.advanceClock(2 * 3600_000, { deliver: false });
      expect(sandbox.applyPromotionCode(session.id, "SOONGONE").error).toBe("This code has expired.");
      expect((await stripe.checkout.sessions.retrieve(session.id)).amount_total).toBe(3490);

      const applied = sandbox.applyPromotionCode(session.id, "fall25");
      expect(applied.error).toBeNull();
      const discounted = await stripe.checkout.sessions.retrieve(session.id, {
        expand: ["total_details.breakdown"],
      });
      // 25.5 % of 34.90 = 8.8995 → 8.90.
      expect(discounted.total_details).toMatchObject({ amount_discount: 890 });
      expect(discounted.amount_total).toBe(3490 - 890);
      const [entry] = defined(discounted.total_details?.breakdown).discounts;
      expect(entry).toMatchObject({
        amount: 890,
        discount: { object: "discount", source: { coupon: coupon.id, type: "coupon" } },
      });
    });
  });

  describe("automatic tax", () => {
    it("waits for the address, then taxes each line and the shipping by the destination's rate", async () => {
      const coupon = await stripe.coupons.create({ percent_off: 20 });
      const session = await stripe.checkout.sessions.create(
        usd({
          automatic_tax: { enabled: true },
          discounts: [{ coupon: coupon.id }],
          shipping_options: [ground],
          shipping_address_collection: { allowed_countries: ["US"] },
        }),
      );
      expect(session.automatic_tax).toMatchObject({ enabled: true, status: "requires_location_inputs" });
      expect(session.total_details?.amount_tax).toBe(0);

      const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized", {
        deliver: false,
        shipping: {
          name: "Ada",
          address: { line1: "1 Main St", city: "Albany", state: "NY", postal_code: "12207", country: "US" },
        },
      });
      const paid = await stripe.checkout.sessions.retrieve(session.id, {
        expand: ["line_items", "total_details.breakdown"],
      });
      // New York (stand-in table): 4 %, shipping taxed. Lines 2000 → 80, 792 → 31.68 → 32; shipping 599 → 23.96 → 24.
      expect(paid.automatic_tax).toMatchObject({ enabled: true, status: "complete" });
      expect(defined(paid.line_items).data.map((line) => line.amount_tax)).toEqual([80, 32]);
      expect(paid.shipping_cost).toMatchObject({ amount_subtotal: 599, amount_tax: 24, amount_total: 623 });
      expect(paid.total_details).toMatchObject({
        amount_discount: 698,
        amount_shipping: 599,
        amount_tax: 136,
      });
      expect(paid.amount_total).toBe(3490 - 698 + 599 + 136);
      expect(defined(paymentIntent).amount).toBe(paid.amount_total);
      const [tax] = defined(paid.total_details?.breakdown).taxes;
      expect(tax).toMatchObject({
        amount: 136,
        taxability_reason: "standard_rated",
        taxable_amount: 2000 + 792 + 599,
        rate: {
          object: "tax_rate",
          percentage: 4,
          country: "US",
          state: "NY",
          tax_type: "sales_tax",
          inclusive: false,
        },
      });
    });

    it("charges no tax where the stand-in's shop collects none", async () => {
      const session = await stripe.checkout.sessions.create(
        usd({ automatic_tax: { enabled: true }, shipping_address_collection: { allowed_countries: ["US"] } }),
      );
      await sandbox.completeCheckoutSession(session.id, "authorized", {
        deliver: false,
        shipping: {
          name: "Ada",
          address: { line1: "1 Main St", city: "Portland", state: "OR", postal_code: "97201", country: "US" },
        },
      });
      const paid = await stripe.checkout.sessions.retrieve(session.id, {
        expand: ["total_details.breakdown"],
      });
      expect(paid.automatic_tax.status).toBe("complete");
      expect(paid.total_details).toMatchObject({ amount_tax: 0, breakdown: { taxes: [], discounts: [] } });
      expect(paid.amount_total).toBe(3490);
    });
  });

  describe("tax-inclusive prices (price_data.tax_behavior = inclusive)", () => {
    const inclusive = (taxCode?: string): Stripe.Checkout.SessionCreateParams =>
      usd({
        line_items: [
          {
            price_data: {
              currency: "usd",
              unit_amount: 1250,
              tax_behavior: "inclusive",
              product_data: { name: "Mug", ...(taxCode ? { tax_code: taxCode } : {}) },
            },
            quantity: 2,
          },
          {
            price_data: {
              currency: "usd",
              unit_amount: 990,
              tax_behavior: "inclusive",
              product_data: { name: "Tea" },
            },
            quantity: 1,
          },
        ],
        automatic_tax: { enabled: true },
        shipping_options: [
          { shipping_rate_data: { ...defined(ground.shipping_rate_data), tax_behavior: "inclusive" } },
        ],
        shipping_address_collection: { allowed_countries: ["GB"] },
      });

    it("finds the tax inside each line and the shipping; only exclusive tax would add to the total", async () => {
      const coupon = await stripe.coupons.create({ percent_off: 20 });
      const session = await stripe.checkout.sessions.create({
        ...inclusive("txcd_99999999"),
        discounts: [{ coupon: coupon.id }],
      });
      await sandbox.completeCheckoutSession(session.id, "authorized", {
        deliver: false,
        shipping: {
          name: "Ada",
          address: { line1: "1 High St", city: "London", postal_code: "SW1A 1AA", country: "GB" },
        },
      });
      const paid = await stripe.checkout.sessions.retrieve(session.id, {
        expand: ["line_items", "total_details.breakdown"],
      });
      // GB (stand-in table): 20 % VAT, shipping taxed. Lines after the 20 % discount: 2000 and 792;
      // the tax inside: 2000 × 20/120 = 333.33 → 333, 792 × 20/120 = 132; shipping 599 × 20/120 = 99.83 → 100.
      const lines = defined(paid.line_items).data;
      expect(
        lines.map((line) => [line.amount_subtotal, line.amount_discount, line.amount_tax, line.amount_total]),
      ).toEqual([
        [2500, 500, 333, 2000],
        [990, 198, 132, 792],
      ]);
      expect(paid.shipping_cost).toMatchObject({ amount_subtotal: 599, amount_tax: 100, amount_total: 599 });
      expect(paid.total_details).toMatchObject({
        amount_discount: 698,
        amount_shipping: 599,
        amount_tax: 565,
      });
      expect(paid.amount_total).toBe(3490 - 698 + 599);
      expect(paid.amount_total).toBe(lines.reduce((sum, line) => sum + line.amount_total, 0) + 599);
      const taxes = defined(paid.total_details?.breakdown).taxes;
      expect(taxes).toHaveLength(1);
      expect(taxes[0]).toMatchObject({
        amount: 565,
        taxable_amount: 2000 - 333 + (792 - 132) + (599 - 100),
        taxability_reason: "standard_rated",
        rate: { object: "tax_rate", percentage: 20, country: "GB", tax_type: "vat", inclusive: true },
      });
      // The Tax Rate keeps Stripe's example object's fields.
      expect(Object.keys(defined(taxes[0]).rate).sort()).toEqual(
        Object.keys(fixtures.resources.tax_rate).sort(),
      );
    });

    it("refuses a tax_behavior Stripe does not know, and a tax code that does not exist, in Stripe's words", async () => {
      const params = inclusive();
      const [first, ...rest] = defined(params.line_items);
      const wrongBehavior = {
        ...params,
        line_items: [
          {
            ...first,
            price_data: { ...defined(defined(first).price_data), tax_behavior: "included" as never },
          },
          ...rest,
        ],
      };
      await expect(stripe.checkout.sessions.create(wrongBehavior)).rejects.toMatchObject({
        statusCode: 400,
        param: "line_items[0][price_data][tax_behavior]",
        message:
          "Invalid line_items[0][price_data][tax_behavior]: must be one of exclusive, inclusive, or unspecified",
      });
      await expect(stripe.checkout.sessions.create(inclusive("food"))).rejects.toMatchObject({
        statusCode: 404,
        code: "resource_missing",
        param: "line_items[0][price_data][product_data][tax_code]",
        message: "No such tax_code: 'food'",
      });
    });
  });

  describe("Stripe's minimum charge", () => {
    it("refuses a session whose total is under 0.50 USD", async () => {
      const error = await stripe.checkout.sessions
        .create(
          usd({
            line_items: [
              {
                price_data: { currency: "usd", unit_amount: 49, product_data: { name: "Sticker" } },
                quantity: 1,
              },
            ],
          }),
        )
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error).toMatchObject({
        code: "amount_too_small",
        message: "The Checkout Session's total amount due must add up to at least $0.50 usd",
      });
    });

    it("counts the discount: a coupon that brings the total under the minimum is refused too", async () => {
      const coupon = await stripe.coupons.create({ amount_off: 3450, currency: "usd" });
      await expect(
        stripe.checkout.sessions.create(usd({ discounts: [{ coupon: coupon.id }] })),
      ).rejects.toMatchObject({
        code: "amount_too_small",
      });
    });

    it("accepts exactly the minimum", async () => {
      const session = await stripe.checkout.sessions.create(
        usd({
          line_items: [
            {
              price_data: { currency: "usd", unit_amount: 50, product_data: { name: "Sticker" } },
              quantity: 1,
            },
          ],
        }),
      );
      expect(session.amount_total).toBe(50);
    });
  });
});
