import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { createCustomerLinks, deriveLinkSecret } from "../../src/pages";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import {
  launchChromium,
  logInToConsole,
  screenshotDir,
  startPublicEntrance,
  type PublicEntrance,
} from "./browser";

/**
 * Returns in Chromium, against the service as users run it (src/server.ts in a child process,
 * the local engine, the Stripe and EasyPost stand-ins): the customer's return form behind the
 * order page's signed link, and the console's returns of an order.
 */
describe("returns: the customer's form and the console", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    harness = await E2eHarness.start({ env: { PUBLIC_URL: publicUrl, RETURN_RESTOCKING_FEE: "500" } });
    entrance.forwardTo(harness.app.url);
    await harness.addProduct("BOOT", 20, 4000);
    await harness.addProduct("SOCK", 20, 800);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  async function deliveredOrder(customerId: string, items: { sku: string; quantity: number }[]) {
    const { orderId, checkoutSessionId } = await harness.checkout(customerId, items);
    await harness.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    const shipped = await harness.eventually(async () => {
      const order = await harness.order(orderId);
      const tracking = order.shipment?.trackingNumber;
      if (!tracking || !harness.smtp.accepted.some((m) => m.text?.includes(tracking)))
        throw new Error("not on its way yet");
      return tracking;
    }, 40_000);
    await harness.engine.drain(); // the run waits for the delivery event before the carrier reports it
    expect(shipped).not.toBe("");
    await harness.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await harness.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await harness.eventually(async () => {
      if ((await harness.order(orderId)).status !== "delivered") throw new Error("not delivered yet");
    });
    return orderId;
  }

  const returnsOf = (orderId: string) =>
    harness.db.return.findMany({ where: { orderId }, orderBy: { createdAt: "asc" } });

  it("the customer asks for an exchange on the form, gets the label, and sees the refund and the new item once it is back", async () => {
    const orderId = await deliveredOrder("cus_browser_return", [{ sku: "BOOT", quantity: 2 }]);
    const links = createCustomerLinks({ publicUrl, secret: deriveLinkSecret(adminToken) });
    const page = await (await browser.newContext({ viewport: { width: 900, height: 900 } })).newPage();
    await page.goto(links.order(orderId));
    await page.getByRole("link", { name: "Return items" }).click();
    await page.getByRole("heading", { name: "Return items" }).waitFor();
    await page.fill('input[name="qty_BOOT"]', "1");
    await page.selectOption('select[name="reason"]', "not_as_described");
    await page.fill('input[name="note"]', "the colour is off");
    // Socks instead of the money: the form offers what costs no more than the boot.
    await page.selectOption('select[name="exchange_BOOT"]', "SOCK");
    await page.getByRole("button", { name: "Ask for a return label" }).click();
    await page.getByRole("status").getByText("Your return is registered").waitFor();
    await page.screenshot({ path: path.join(screenshotDir, "customer-return-form.png"), fullPage: true });

    const row = await harness.eventually(async () => {
      const [found] = await returnsOf(orderId);
      if (!found?.labelSentAt || !found.labelTrackingNumber) throw new Error("no label e-mailed yet");
      return found;
    });
    const mail = harness.smtp.accepted.filter((m) => m.text?.includes(row.labelTrackingNumber ?? "-"));
    expect(mail).toHaveLength(1);
    expect(mail[0]?.subject).toMatch(/return label/i);

    // Only one boot is left to return: the form says so, and names the returned line by its product.
    const boot = page.locator('fieldset[data-sku="BOOT"]');
    await boot.getByText("of 1 you can return (1 already returned)").waitFor();
    expect(await page.locator('input[name="qty_BOOT"]').getAttribute("max")).toBe("1");
    await page.locator("#your-returns").getByText("1 × Product BOOT").waitFor();
    // Asking for two anyway (past the browser's check) is refused by the service, with the reason.
    await page.locator('input[name="qty_BOOT"]').evaluate((input) => input.removeAttribute("max"));
    await page.fill('input[name="qty_BOOT"]', "2");
    await page.selectOption('select[name="reason"]', "no_longer_needed");
    await page.selectOption('select[name="exchange_BOOT"]', "");
    await page.getByRole("button", { name: "Ask for a return label" }).click();
    await page.getByRole("alert").getByText("1 left to return").waitFor();
    expect(await returnsOf(orderId)).toHaveLength(1);

    // The carrier brings the parcel back (the stand-in's signed tracker webhook), once the run waits for it.
    await harness.engine.drain();
    await harness.easyPost.advanceTracker(row.labelTrackingNumber ?? "", "in_transit");
    await harness.easyPost.advanceTracker(row.labelTrackingNumber ?? "", "delivered");
    await harness.eventually(async () => {
      const [done] = await returnsOf(orderId);
      if (done?.status !== "closed") throw new Error(`return ${done?.status}`);
    });
    await page.goto(`${publicUrl}/orders/${orderId}/return?sig=${links.sign("order", orderId)}`);
    // 4000 for the boot in exchange for socks at 800: 3200 back, no restocking fee on an exchange.
    await page.locator("#your-returns").getByText("refunded $32.00").waitFor();
    expect(harness.easyPost.purchased().filter((s) => s.reference === `exchange-${row.id}`)).toHaveLength(1);
    const [closed] = await returnsOf(orderId);
    expect(
      harness.smtp.accepted.filter((m) => m.text?.includes(closed?.exchangeTrackingNumber ?? "-")),
    ).toHaveLength(1);
  }, 120_000);

  const loggedIn = (): Promise<Page> => logInToConsole(browser, publicUrl);

  it("ops create a return, mark it received damaged (written off, refunded), and reject another", async () => {
    const orderId = await deliveredOrder("cus_browser_ops_return", [
      { sku: "BOOT", quantity: 1 },
      { sku: "SOCK", quantity: 3 },
    ]);
    const page = await loggedIn();
    await page.goto(`${publicUrl}/ops/orders/${orderId}`);
    await page.getByRole("link", { name: "Returns…" }).click();
    await page.getByRole("heading", { name: /Returns of order/ }).waitFor();

    // The console's list of open returns knows nothing of this order yet.
    await page.goto(`${publicUrl}/ops/returns`);
    await page.getByRole("heading", { name: "Open returns" }).waitFor();
    await page.goto(`${publicUrl}/ops/orders/${orderId}/returns`);
    await page.fill('input[name="qty_SOCK"]', "2");
    await page.selectOption('#new-return select[name="reason"]', "damaged");
    await page.getByRole("button", { name: "Create return" }).click();
    await page.getByText("Return created.").waitFor();
    const [first] = await returnsOf(orderId);
    const block = page.locator(`[data-return-id="${first?.id}"]`);
    await harness.eventually(async () => {
      const [found] = await returnsOf(orderId);
      if (!found?.labelSentAt) throw new Error("no label yet");
    });
    await page.goto(`${publicUrl}/ops/returns`);
    await page.locator(`#open-returns tr[data-return-id="${first?.id}"]`).getByText("approved").waitFor();
    await page.locator(`#open-returns tr[data-return-id="${first?.id}"] a`).click();
    await block.getByText(/Label .* e-mailed/).waitFor();

    await block.locator('select[name="condition"]').selectOption("damaged");
    await block.getByRole("button", { name: "Mark received" }).click();
    await page.getByText("Return received.").waitFor();
    await harness.eventually(async () => {
      const [found] = await returnsOf(orderId);
      if (found?.status !== "closed") throw new Error(`return ${found?.status}`);
    });
    await page.reload();
    await block.getByText("Written off.").waitFor();
    // Two socks at 800, less the fixed 500.
    await block.getByText("Refunded $11.00.").waitFor();
    await page.screenshot({ path: path.join(screenshotDir, "ops-order-returns.png"), fullPage: true });

    // A second return, rejected: nothing refunded, the unused label handed back.
    await page.fill('input[name="qty_BOOT"]', "1");
    await page.getByRole("button", { name: "Create return" }).click();
    await page.getByText("Return created.").waitFor();
    const second = (await returnsOf(orderId))[1];
    await harness.eventually(async () => {
      const found = await harness.db.return.findUniqueOrThrow({ where: { id: second?.id ?? "" } });
      if (!found.labelTrackingNumber) throw new Error("no label yet");
    });
    const secondBlock = page.locator(`[data-return-id="${second?.id}"]`);
    await secondBlock.locator('input[name="note"]').first().fill("worn outside");
    await secondBlock.getByRole("button", { name: "Reject" }).click();
    await page.getByText("Return rejected.").waitFor();
    await harness.eventually(async () => {
      const found = await harness.db.return.findUniqueOrThrow({ where: { id: second?.id ?? "" } });
      if (found.labelRefundStatus !== "submitted") throw new Error(`label ${found.labelRefundStatus}`);
    });
    const refunds = await harness.db.refund.findMany({ where: { orderId } });
    expect(refunds.map((r) => r.amount)).toEqual([1100]);
  }, 120_000);
});
