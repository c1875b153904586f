import { defined } from "../../support/defined";
import { sessionParams, startSandbox } from "./harness";

describe("the stand-in's pay page", () => {
  it("names the shop as Stripe names the account, and shows amounts in the currency's decimals", async () => {
    const { sandbox, stripe } = await startSandbox({ businessName: "Acme <Coffee>" });
    try {
      const yen = await stripe.checkout.sessions.create(
        sessionParams({
          line_items: [
            {
              price_data: { currency: "jpy", unit_amount: 1250, product_data: { name: "Cup" } },
              quantity: 2,
            },
          ],
        }),
      );
      const page = await (await fetch(yen.url as string)).text();
      expect(page).toContain('Acme &lt;Coffee&gt; <span class="tag">TEST MODE');
      expect(page).toContain("2500 JPY");
      expect(page).not.toContain("25.00 JPY");

      const euros = await stripe.checkout.sessions.create(sessionParams());
      expect(await (await fetch(euros.url as string)).text()).toContain("34.90 EUR");
    } finally {
      await sandbox.close();
    }
  });

  it("takes a promotion code and a shipping option from its forms, showing Stripe's message for a bad code", async () => {
    const { sandbox, stripe } = await startSandbox();
    try {
      const coupon = await stripe.coupons.create({ percent_off: 10 });
      await stripe.promotionCodes.create({
        promotion: { type: "coupon", coupon: coupon.id },
        code: "TENOFF",
      });
      const session = await stripe.checkout.sessions.create(
        sessionParams({
          allow_promotion_codes: true,
          payment_intent_data: { capture_method: "manual" },
          shipping_options: [
            {
              shipping_rate_data: { display_name: "Ground", fixed_amount: { amount: 500, currency: "eur" } },
            },
            {
              shipping_rate_data: {
                display_name: "Express",
                fixed_amount: { amount: 1500, currency: "eur" },
              },
            },
          ],
        }),
      );
      const url = session.url as string;
      const post = (path: string, body: string, redirect: RequestRedirect = "follow") =>
        fetch(`${url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body,
          redirect,
        });

      const refused = await (await post("/promotion_code", "code=NOPE")).text();
      expect(refused).toContain('role="alert">This code is invalid.</p>');

      const applied = await (await post("/promotion_code", "code=tenoff")).text();
      // 10 % of 34.90 = 3.49; Ground preselected.
      expect(applied).toContain('Discount</td><td class="num">−3.49 EUR');
      expect(applied).toContain('Shipping</td><td class="num">5.00 EUR');
      expect(applied).toContain("36.41 EUR");

      const express = defined(session.shipping_options?.[1]).shipping_rate as string;
      // The shop's success page is not fetched: the redirect to it is the answer.
      const paid = await post("", `outcome=authorized&shipping_rate=${express}`, "manual");
      expect(paid.headers.get("location")).toContain("shop.example/thanks");
      const completed = await stripe.checkout.sessions.retrieve(session.id);
      expect(completed.shipping_cost?.shipping_rate).toBe(express);
      expect(completed.amount_total).toBe(3490 - 349 + 1500);
    } finally {
      await sandbox.close();
    }
  });
});
