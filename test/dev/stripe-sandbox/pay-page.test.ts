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
});
