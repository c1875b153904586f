import type { Browser, Page } from "playwright-core";
import { createCustomerLinks, deriveLinkSecret } from "../../src/pages";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { launchChromium, logInToConsole, startPublicEntrance, type PublicEntrance } from "./browser";

/**
 * The shop's own name and colour on its customers' pages and e-mails, and money as people read it:
 * a refund typed in dollars in the console, shown to the customer on their order page. Against the
 * service as users run it (src/server.ts in a child process, the local engine, the stand-ins).
 */
const shop = {
  SHOP_NAME: "Acme Coffee Roasters",
  SHOP_ACCENT_COLOR: "#0a7d4f",
  SHOP_SUPPORT_EMAIL: "help@acme.example",
  SHOP_SUPPORT_URL: "https://acme.example/help",
  SHOP_FOOTER: "Acme Coffee Roasters Ltd · 1 Bean Street, Portland · VAT 123",
};
const accentRgb = "rgb(10, 125, 79)";

describe("the shop's brand and its money, in Chromium", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;
  let links: ReturnType<typeof createCustomerLinks>;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    harness = await E2eHarness.start({ env: { PUBLIC_URL: publicUrl, ...shop } });
    entrance.forwardTo(harness.app.url);
    links = createCustomerLinks({ publicUrl, secret: deriveLinkSecret(adminToken) });
    await harness.addProduct("BEANS", 20, 2500);
    // A long name: the return form's exchange choices must still fit at 1100 px.
    await harness.addProduct("GRINDER", 5, 1900);
    await harness.db.product.update({
      where: { sku: "GRINDER" },
      data: { name: "Hand grinder with ceramic burrs, stepless adjustment and a travel pouch (matte black)" },
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    return context.newPage();
  }

  /** The page shows the shop: its name in the header, its colour on links and buttons, its footer. */
  async function expectBranded(page: Page) {
    expect((await page.locator("header.bar .brand").textContent())?.trim()).toBe(shop.SHOP_NAME);
    expect(await page.title()).toContain(shop.SHOP_NAME);
    const accent = await page.evaluate(() =>
      getComputedStyle(document.documentElement).getPropertyValue("--accent").trim(),
    );
    expect(accent).toBe(shop.SHOP_ACCENT_COLOR);
    const footer = page.locator("footer.shop");
    expect(await footer.textContent()).toContain(shop.SHOP_FOOTER);
    expect(await footer.locator(`a[href="mailto:${shop.SHOP_SUPPORT_EMAIL}"]`).count()).toBe(1);
  }

  it("shows the shop on the success, order, review and return pages and in its e-mails; a refund typed as 12.50 in the console refunds 1250, shown on the order page", async () => {
    const { orderId, checkoutSessionId } = await harness.checkout("cus_brand", [
      { sku: "BEANS", quantity: 2 },
    ]);
    await harness.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");

    // The success page: the shop's, and it promises only the e-mail that really comes.
    const page = await newPage();
    await page.goto(`${publicUrl}/checkout/success?session_id=${checkoutSessionId}`);
    await page.getByRole("heading", { name: "Thank you for your order" }).waitFor();
    await expectBranded(page);
    const success = (await page.textContent("main")) ?? "";
    expect(success).not.toMatch(/confirmation/i);
    expect(success).toContain("We will e-mail cus_brand@example.com when it ships");
    // Authorised, or already charged if it shipped meanwhile (no fulfilment hold here).
    expect(await page.locator("#order-money").textContent()).toMatch(
      /authorised for \$50\.00|Charged to your card\$50\.00/,
    );

    // Delivered: the customer may review and return.
    const tracking = await harness.eventually(async () => {
      const order = await harness.order(orderId);
      const number = order.shipment?.trackingNumber;
      if (!number || !harness.smtp.accepted.some((m) => m.text?.includes(number)))
        throw new Error("not shipped");
      return number;
    }, 40_000);
    await harness.engine.drain();
    await harness.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await harness.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await harness.eventually(async () => {
      if ((await harness.order(orderId)).status !== "delivered") throw new Error("not delivered yet");
    });

    // The shipped e-mail: the shop's name and colour in its HTML, its sign-off and help in both parts.
    const shippedMail = harness.smtp.accepted.find((m) => m.text?.includes(tracking));
    expect(shippedMail?.text).toContain(`Thank you for shopping with us.`);
    expect(shippedMail?.text).toContain(`— ${shop.SHOP_NAME}`);
    expect(shippedMail?.text).toContain(`Questions? Write to ${shop.SHOP_SUPPORT_EMAIL}`);
    expect(shippedMail?.text).toContain(shop.SHOP_FOOTER);
    expect(shippedMail?.from?.text).toContain(shop.SHOP_NAME);
    const mailPage = await newPage();
    await mailPage.setContent(String(shippedMail?.html));
    const header = mailPage.locator("[data-shop-header] strong");
    expect(await header.textContent()).toBe(shop.SHOP_NAME);
    expect(await header.evaluate((el) => getComputedStyle(el).color)).toBe(accentRgb);
    expect(
      await mailPage
        .locator("a", { hasText: "Track your parcel" })
        .evaluate((el) => getComputedStyle(el).color),
    ).toBe(accentRgb);
    expect(await mailPage.locator("[data-shop-footer]").textContent()).toContain(shop.SHOP_FOOTER);

    // The order page.
    await page.goto(links.order(orderId));
    await page.getByRole("heading", { name: "Your order" }).waitFor();
    await expectBranded(page);

    // The review page: the shop's, and the five stars on one line.
    await page.goto(links.review(orderId));
    await page.getByRole("heading", { name: "How was your order?" }).waitFor();
    await expectBranded(page);
    const starTops = await page
      .locator("fieldset.stars label")
      .evaluateAll((labels) => labels.map((label) => Math.round(label.getBoundingClientRect().top)));
    expect(starTops).toHaveLength(5);
    expect(new Set(starTops).size).toBe(1);

    // The return form: the shop's; the exchange choice fits its card at 1100 px; no reason is chosen
    // for the customer; a cheaper exchange says its difference is refunded.
    await page.goto(`${publicUrl}/orders/${orderId}/return?sig=${links.sign("order", orderId)}`);
    await page.getByRole("heading", { name: "Return items" }).waitFor();
    await expectBranded(page);
    const select = page.locator('select[name="exchange_BEANS"]');
    const form = page.locator("#return-form");
    const [selectBox, formBox] = [await select.boundingBox(), await form.boundingBox()];
    expect(selectBox && formBox && selectBox.x + selectBox.width <= formBox.x + formBox.width).toBe(true);
    expect(await page.locator('select[name="reason"]').inputValue()).toBe("");
    expect(await select.locator('option[value="GRINDER"]').textContent()).toContain(
      "$6.00 less, refunded to your card",
    );
    await page.fill('input[name="qty_BEANS"]', "1");
    await page.getByRole("button", { name: "Ask for a return label" }).click();
    // The browser asks for a reason before anything is sent.
    expect(
      await page.locator('select[name="reason"]').evaluate((el) => (el as HTMLSelectElement).validity.valid),
    ).toBe(false);
    expect(await harness.db.return.count({ where: { orderId } })).toBe(0);

    // Ops refund 12.50 typed as dollars: 1250 cents reach Stripe.
    const ops = await logInToConsole(browser, publicUrl);
    expect(await ops.title()).toContain(`${shop.SHOP_NAME} ops console`);
    await ops.goto(`${publicUrl}/ops/orders/${orderId}/confirm/refund`);
    await ops.getByText("Amount in USD").waitFor();
    expect(await ops.locator("p.refundable").textContent()).toContain("up to $50.00 left to refund");
    await ops.fill('input[name="amount"]', "12.50");
    await ops.getByRole("button", { name: "Confirm" }).click();
    await ops.getByText("Refund requested.").waitFor();
    const refunds = await harness.eventually(async () => {
      const rows = await harness.db.refund.findMany({ where: { orderId } });
      if (rows.some((row) => row.status === "pending")) throw new Error("refund pending");
      return rows;
    });
    expect(refunds.map((row) => [row.amount, row.status])).toEqual([[1250, "succeeded"]]);
    expect((await harness.order(orderId)).payment).toMatchObject({
      amountCaptured: 5000,
      amountRefunded: 1250,
    });

    // More than is left is refused in dollars too, and refunds nothing.
    await ops.goto(`${publicUrl}/ops/orders/${orderId}/confirm/refund`);
    expect(await ops.locator("p.refundable").textContent()).toContain("up to $37.50 left to refund");
    await ops.fill('input[name="amount"]', "40");
    await ops.getByRole("button", { name: "Confirm" }).click();
    await ops.getByText("$40.00 is more than is left to refund: $37.50").waitFor();
    expect(await harness.db.refund.count({ where: { orderId } })).toBe(1);

    // The customer sees it on the order page, with what they paid in the end.
    await page.goto(links.order(orderId));
    const refundRow = page.locator("#order-money tr.refund");
    expect(await refundRow.count()).toBe(1);
    expect(await refundRow.textContent()).toContain("−$12.50");
    expect(await page.locator("#order-money").textContent()).toMatch(/You paid in the end\s*\$37\.50/);

    // And the refund e-mail is the shop's too.
    const refundMail = await harness.eventually(async () => {
      const mail = harness.smtp.accepted.find((m) => (m.subject ?? "").includes("A refund of $12.50"));
      if (!mail) throw new Error("no refund e-mail yet");
      return mail;
    });
    expect(refundMail.text).toContain(`— ${shop.SHOP_NAME}`);
    await mailPage.setContent(String(refundMail.html));
    expect(
      await mailPage.locator("[data-shop-header] strong").evaluate((el) => getComputedStyle(el).color),
    ).toBe(accentRgb);
  }, 150_000);
});
