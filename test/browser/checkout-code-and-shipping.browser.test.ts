import type { Browser } from "playwright-core";
import { createCustomerLinks, deriveLinkSecret } from "../../src/pages";
import { storedBreakdown, type MoneyBreakdown } from "../../src/payments/money-breakdown";
import { defined } from "../support/defined";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { launchChromium, startPublicEntrance, type PublicEntrance } from "./browser";

/**
 * Issue 39's must-show on the Stripe stand-in's pay page, in Chromium, against the service as
 * users run it: a shop with a rate table, Stripe Tax on tax-inclusive prices and promotion codes.
 * The customer types an unknown code (Stripe's own message on the page), then a real one, picks
 * the dearer shipping option and pays; the order's recorded breakdown is the session's to the cent,
 * and the order page shows each line's discount and the tax included.
 */
const rateTable = {
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
};

describe("the Stripe stand-in's pay page: a promotion code and a shipping option, in Chromium", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let entrance: PublicEntrance;
  let publicUrl: string;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    harness = await E2eHarness.start({
      env: {
        PUBLIC_URL: publicUrl,
        SHIPPING_RATE_TABLE: JSON.stringify(rateTable),
        CHECKOUT_AUTOMATIC_TAX: "true",
        CHECKOUT_TAX_BEHAVIOR: "inclusive",
        CHECKOUT_DEFAULT_TAX_CODE: "txcd_99999999",
        CHECKOUT_ALLOW_PROMOTION_CODES: "true",
      },
    });
    entrance.forwardTo(harness.app.url);
    await harness.addProduct("BEANS", 20, 2500);
    await harness.addProduct("FILTERS", 20, 990);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  it("an unknown code gets Stripe's message; a real one and Express are charged, and recorded to the cent", async () => {
    const stripe = harness.stripe();
    const coupon = await stripe.coupons.create({ percent_off: 15 });
    await stripe.promotionCodes.create({ promotion: { type: "coupon", coupon: coupon.id }, code: "BEANS15" });

    const res = await fetch(`${harness.app.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus_code",
        email: "cus_code@example.com",
        items: [
          { sku: "BEANS", quantity: 3 },
          { sku: "FILTERS", quantity: 1 },
        ],
        destination: { country: "US", region: "CA", postalCode: "94103" },
      }),
    });
    expect(res.status).toBe(201);
    const { orderId, checkoutSessionId, checkoutUrl } = (await res.json()) as {
      orderId: string;
      checkoutSessionId: string;
      checkoutUrl: string;
    };

    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    await page.goto(checkoutUrl);
    await page.getByLabel("Promotion code").fill("NOSUCHCODE");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toBe("This code is invalid.");
    expect(await page.textContent(".summary")).not.toContain("Discount");

    await page.getByLabel("Promotion code").fill("beans15");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.locator("tr", { hasText: "Discount" }).waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    await page.getByLabel(/Express/).check();
    await page.getByRole("button", { name: "Pay (authorise card)" }).click();
    await page.waitForURL(new RegExp(`^${publicUrl}/checkout/success`));

    // What Stripe computed: the session with its lines and chosen rate, read back from the stand-in.
    const session = await stripe.checkout.sessions.retrieve(checkoutSessionId, {
      expand: ["line_items.data.price.product", "shipping_cost.shipping_rate"],
    });
    const recorded: MoneyBreakdown = await harness.eventually(async () =>
      defined(storedBreakdown((await harness.order(orderId)).moneyBreakdown)),
    );
    // 3 × 25.00 + 9.90 = 84.90, 15 % off = 12.74; Express 15.00; California's 7.25 % inside the prices.
    expect(session).toMatchObject({
      amount_subtotal: 8490,
      total_details: { amount_discount: 1274, amount_shipping: 1500 },
      shipping_cost: { shipping_rate: { display_name: "Express" } },
    });
    expect(session.total_details?.amount_tax).toBeGreaterThan(0);
    expect(session.amount_total).toBe(8490 - 1274 + 1500);
    expect(recorded).toMatchObject({
      currency: "usd",
      subtotal: session.amount_subtotal,
      discount: session.total_details?.amount_discount,
      shipping: session.total_details?.amount_shipping,
      tax: session.total_details?.amount_tax,
      total: session.amount_total,
      shippingRate: {
        displayName: "Express",
        metadata: { rateId: "express" },
        amountSubtotal: session.shipping_cost?.amount_subtotal,
        amountTax: session.shipping_cost?.amount_tax,
        amountTotal: session.shipping_cost?.amount_total,
      },
    });
    expect(recorded.lines).toEqual(
      defined(session.line_items).data.map((item) => ({
        sku: (item.price?.product as { metadata: Record<string, string> }).metadata.sku,
        quantity: item.quantity,
        amountSubtotal: item.amount_subtotal,
        amountDiscount: item.amount_discount,
        amountTax: item.amount_tax,
        amountTotal: item.amount_total,
        taxInclusive: true,
      })),
    );
    expect((await harness.order(orderId)).total).toBe(session.amount_total);

    // The customer's order page: each line's discount share and the tax inside it, as recorded.
    const links = createCustomerLinks({ publicUrl, secret: deriveLinkSecret(adminToken) });
    await page.goto(`${publicUrl}/orders/${orderId}?sig=${links.sign("order", orderId)}`);
    const usd = (cents: number) => `$${(cents / 100).toFixed(2)}`;
    for (const line of recorded.lines) {
      expect((await page.locator(`[data-line-money="${line.sku}"]`).textContent())?.trim()).toBe(
        `discount −${usd(line.amountDiscount)} · includes tax ${usd(line.amountTax)}`,
      );
    }
    expect(await page.locator('[data-money="Tax (included)"]').textContent()).toContain(usd(recorded.tax));
    expect(await page.locator('[data-money="Shipping (Express)"]').textContent()).toContain(usd(1500));
    await context.close();
  });
});
