import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { E2eHarness } from "../e2e/e2e-harness";
import {
  launchChromium,
  logInToConsole,
  screenshotDir,
  startPublicEntrance,
  type PublicEntrance,
} from "./browser";

/**
 * The console's order page with several parcels, and its Re-ship action, in Chromium against the
 * service as users run it (src/server.ts in a child process, the local engine, the Stripe and
 * EasyPost stand-ins): one new label, the old one's refund asked, one new tracking e-mail, even
 * when the confirmation is posted twice.
 */
describe("ops console: an order in two parcels, and a re-ship", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    harness = await E2eHarness.start({ env: { PUBLIC_URL: publicUrl } });
    entrance.forwardTo(harness.app.url);
    await harness.addProduct("RS-FRAME", 10, 9000);
    await harness.addProduct("RS-CARD", 10, 500);
    await harness.db.product.update({ where: { sku: "RS-FRAME" }, data: { shipsAlone: true } });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  const loggedIn = (): Promise<Page> => logInToConsole(browser, publicUrl);

  it("lists both parcels with tracking, and re-ships one: a new label, the old refund asked, one e-mail", async () => {
    const { orderId, checkoutSessionId } = await harness.checkout("cus_browser_reship", [
      { sku: "RS-FRAME", quantity: 1 },
      { sku: "RS-CARD", quantity: 1 },
    ]);
    await harness.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    await harness.eventually(async () => {
      if ((await harness.order(orderId)).status !== "shipped") throw new Error("not shipped yet");
    }, 40_000);
    const order = await harness.order(orderId);
    expect(order.shipments).toHaveLength(2);
    const [, frame] = order.shipments;
    const old = frame as NonNullable<typeof frame>;

    const page = await loggedIn();
    await page.goto(`${publicUrl}/ops/orders/${orderId}`);
    for (const shipment of order.shipments)
      expect(await page.locator(`[data-shipment="${shipment.id}"]`).textContent()).toContain(
        shipment.trackingNumber,
      );
    await page.screenshot({ path: path.join(screenshotDir, "ops-order-two-parcels.png"), fullPage: true });

    await page.locator(`[data-shipment="${old.id}"]`).getByRole("link", { name: "Re-ship…" }).click();
    await page.getByText("Re-ship parcel 2?").waitFor();
    const csrf = (await page.locator('input[name="_csrf"]').first().getAttribute("value")) ?? "";
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Parcel re-shipped.").waitFor();

    // The same confirmation posted again (a double click, a reload): nothing new is bought.
    const repeat = await page.request.post(`${publicUrl}/ops/orders/${orderId}/shipments/${old.id}/reship`, {
      form: { _csrf: csrf },
      maxRedirects: 0,
    });
    expect(repeat.status()).toBe(303);

    const purchased = harness.easyPost.purchased().filter((s) => s.reference?.startsWith(`order-${orderId}`));
    expect(purchased.map((s) => s.reference).sort()).toEqual(
      [`order-${orderId}`, `order-${orderId}-2`, `order-${orderId}-2-reship-1`].sort(),
    );
    expect(purchased.find((s) => s.id === old.providerId)?.refund_status).toBe("submitted");
    const after = await harness.order(orderId);
    const replacement = after.shipments.find((s) => s.parcelNumber === 2 && s.generation === 1);
    expect(replacement).toBeDefined();
    const emails = await harness.db.emailMessage.findMany({ where: { orderId, template: "shipped" } });
    expect(emails.map((e) => e.idempotencyKey).sort()).toEqual(
      [`reshipped-${replacement?.id}`, `shipped-${orderId}`].sort(),
    );
    expect(after.timeline.filter((e) => e.kind === "parcel-reshipped")).toHaveLength(1);

    await page.reload();
    expect(await page.locator(`[data-shipment="${old.id}"]`).textContent()).toMatch(
      /replaced .*label refund submitted/s,
    );
    expect(await page.locator(`[data-shipment="${replacement?.id}"]`).textContent()).toContain(
      replacement?.trackingNumber ?? "-",
    );
    await page.screenshot({ path: path.join(screenshotDir, "ops-order-reshipped.png"), fullPage: true });
  }, 120_000);
});
