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
 * The console's hold, release and label void in Chromium, against the service as users run it
 * (src/server.ts in a child process, the local engine, the Stripe and EasyPost stand-ins).
 */
describe("ops console: hold, release, and a cancel that hands the label back", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    // A window long enough that the order is still in it while ops act.
    harness = await E2eHarness.start({
      env: { PUBLIC_URL: publicUrl, FULFILMENT_HOLD: "1h" },
    });
    entrance.forwardTo(harness.app.url);
    await harness.addProduct("CAP", 20, 1500);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  const loggedIn = (): Promise<Page> => logInToConsole(browser, publicUrl);

  it("holds an order in its window with a reason, shows why and since when, releases it, and it ships; a cancel then hands the label back", async () => {
    const { orderId, checkoutSessionId } = await harness.checkout("cus_browser_hold", [
      { sku: "CAP", quantity: 1 },
    ]);
    await harness.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    await harness.eventually(async () => {
      if ((await harness.order(orderId)).holdReason !== "fulfilment_window")
        throw new Error("not in its window");
    });

    const page = await loggedIn();
    await page.goto(`${publicUrl}/ops/orders/${orderId}`);
    await page.getByText("On hold: fulfilment window").waitFor();

    // The window is a hold the console shows; ops replace it with a hold for a reason of theirs.
    await page.getByRole("link", { name: "Hold…", exact: true }).click();
    await page.selectOption('select[name="reason"]', "high_risk");
    await page.fill('input[name="note"]', "billing and shipping countries differ");
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Order held.").waitFor();
    const hold = page.locator("p.hold");
    expect(await hold.textContent()).toMatch(
      /On hold: high risk \(billing and shipping countries differ\) since .+ by ops-console/,
    );
    expect(await page.locator('li[data-kind="hold-placed"]').count()).toBeGreaterThanOrEqual(1);
    await page.screenshot({ path: path.join(screenshotDir, "ops-order-on-hold.png"), fullPage: true });

    await page.getByRole("link", { name: "Release hold…" }).click();
    await page.getByText("Released, it goes on to buy the label.").waitFor();
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Hold released.").waitFor();
    await harness.eventually(async () => {
      if ((await harness.order(orderId)).status !== "shipped") throw new Error("not shipped yet");
    }, 40_000);
    expect(harness.easyPost.purchased().filter((s) => s.reference === `order-${orderId}`)).toHaveLength(1);

    // Bought, not scanned: the console's cancel hands the label back to EasyPost.
    await page.goto(`${publicUrl}/ops/orders/${orderId}`);
    await page.getByRole("link", { name: "Cancel…" }).click();
    await page.fill('input[name="reason"]', "customer phoned");
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Cancellation requested.").waitFor();
    await harness.eventually(async () => {
      if ((await harness.order(orderId)).status !== "cancelled") throw new Error("not cancelled yet");
    }, 40_000);
    await page.reload();
    expect(await page.locator(".label-refund").textContent()).toMatch(/label refund submitted/);
    expect(harness.easyPost.shipments().find((s) => s.reference === `order-${orderId}`)?.refund_status).toBe(
      "submitted",
    );
    await page.screenshot({ path: path.join(screenshotDir, "ops-order-label-refund.png"), fullPage: true });

    // Not held any more: a release is refused with the reason, and nothing changes.
    const refused = await page.request.post(`${publicUrl}/ops/orders/${orderId}/release-hold`, {
      form: { _csrf: (await page.locator('input[name="_csrf"]').first().getAttribute("value")) ?? "" },
      maxRedirects: 0,
    });
    // POST, then 303 to the order page, which shows the refusal.
    expect(refused.status()).toBe(303);
    const location = refused.headers()["location"] ?? "";
    expect(location).toMatch(new RegExp(`^/ops/orders/${orderId}\\?refused=`));
    await page.goto(`${publicUrl}${location}`);
    await page.getByText(/Refused: .*is not on hold/).waitFor();
  }, 120_000);
});
