import type { Browser, Page } from "playwright-core";
import { findOrderDetails } from "../../src/orders/order-details";
import { decide, factsOfDetails, type OrderAction } from "../../src/shared/order-model";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { launchChromium, logInToConsole, startPublicEntrance, type PublicEntrance } from "./browser";

/**
 * The console offers what the order model allows, and only that (decision 0170), on a shipped,
 * a cancelled, a held and a failed order, in Chromium against the service as users run it; what
 * it does not offer it names with the reason; a refused action lands on the order page after a
 * 303; a re-drive clears the "failed for good" notices of the run it replaced.
 */
describe("ops console: the order model's actions, and only those", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;
  let page: Page;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    // Every order waits in its window until the test releases it.
    harness = await E2eHarness.start({ env: { PUBLIC_URL: publicUrl, FULFILMENT_HOLD: "1h" } });
    entrance.forwardTo(harness.app.url);
    await harness.addProduct("MODEL-CAP", 50, 1500);
    browser = await launchChromium();
    page = await logInToConsole(browser, publicUrl);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  const api = (path: string, body: unknown = {}) =>
    fetch(`${harness.app.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const statusOf = async (orderId: string) => (await harness.order(orderId)).status;
  const waitFor = (orderId: string, check: (order: Awaited<ReturnType<E2eHarness["order"]>>) => boolean) =>
    harness.eventually(async () => {
      const order = await harness.order(orderId);
      if (!check(order))
        throw new Error(
          `order ${orderId} is ${order.status}: ${order.timeline.map((e) => e.kind).join(", ")}`,
        );
    }, 60_000);

  async function paidOrder(customerId: string): Promise<string> {
    const { orderId, checkoutSessionId } = await harness.checkout(customerId, [
      { sku: "MODEL-CAP", quantity: 1 },
    ]);
    await harness.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    await waitFor(orderId, (order) => order.holdReason === "fulfilment_window");
    return orderId;
  }

  const actions: readonly { action: OrderAction; link: string }[] = [
    { action: "cancel", link: "Cancel…" },
    { action: "refund", link: "Refund…" },
    { action: "redrive", link: "Re-drive…" },
    { action: "hold", link: "Hold…" },
    { action: "release", link: "Release hold…" },
  ];

  /** The order page's action links, checked against the model on the order as stored now. */
  async function offersExactlyWhatTheModelAllows(orderId: string): Promise<Set<OrderAction>> {
    await page.goto(`${publicUrl}/ops/orders/${orderId}`);
    const details = await findOrderDetails(harness.db, orderId);
    if (!details) throw new Error(`no order ${orderId}`);
    const facts = factsOfDetails(details);
    const offered = new Set<OrderAction>();
    for (const { action, link } of actions) {
      const shown = (await page.getByRole("link", { name: link, exact: true }).count()) > 0;
      const verdict = decide(action, facts);
      const expected = verdict.allowed && (action !== "release" || details.hold !== null);
      expect({ action, shown }).toEqual({ action, shown: expected });
      if (shown) offered.add(action);
      else if (action !== "release" && !verdict.allowed) {
        // Not offered: named, with the reason.
        expect(await page.locator(`li[data-not-offered="${action}"]`).textContent()).toContain(verdict.why);
      }
    }
    return offered;
  }

  it("a shipped order: cancel while the label is unscanned, refund; after the scan no cancel; a refused re-drive lands on the order page", async () => {
    const orderId = await paidOrder("cus_model_shipped");
    expect((await api(`/api/orders/${orderId}/release-hold`)).status).toBe(200);
    await waitFor(orderId, (order) => order.status === "shipped");
    expect([...(await offersExactlyWhatTheModelAllows(orderId))].sort()).toEqual(["cancel", "refund"]);

    await harness.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await waitFor(orderId, (order) => order.shipment?.trackerStatus === "in_transit");
    expect([...(await offersExactlyWhatTheModelAllows(orderId))]).toEqual(["refund"]);

    // Asked anyway (a stale tab): POST, then 303 to the order page with the refusal.
    await page.goto(`${publicUrl}/ops/orders/${orderId}/confirm/redrive`);
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.waitForURL(new RegExp(`/ops/orders/${orderId}\\?refused=`));
    await page.getByText(/Refused: .*cannot be re-driven/).waitFor();
    expect(await statusOf(orderId)).toBe("shipped");
  }, 120_000);

  it("a cancelled order: nothing to cancel, hold, re-drive or refund (the authorisation was released)", async () => {
    const orderId = await paidOrder("cus_model_cancelled");
    expect((await api(`/api/orders/${orderId}/cancel`)).status).toBe(202);
    await waitFor(orderId, (order) => order.status === "cancelled");
    expect([...(await offersExactlyWhatTheModelAllows(orderId))]).toEqual([]);
    expect(await page.locator("li[data-not-offered]").count()).toBe(4);
  }, 120_000);

  it("a held order: release and cancel offered, no second hold, and its authorisation shown with no Refund", async () => {
    const orderId = await paidOrder("cus_model_held");
    expect((await api(`/api/orders/${orderId}/hold`, { reason: "high_risk" })).status).toBe(200);
    const offered = await offersExactlyWhatTheModelAllows(orderId);
    expect(offered.has("release")).toBe(true);
    expect(offered.has("cancel")).toBe(true);
    expect(offered.has("hold")).toBe(false);
    expect(offered.has("refund")).toBe(false);
    expect(await page.locator('[data-payment="authorised"]').textContent()).toMatch(
      /card authorised for \$15\.00/,
    );
    expect(await page.getByText("No payment recorded.").count()).toBe(0);
  }, 120_000);

  it("a failed order: re-drive offered; once re-driven and shipped, the old run's failure notice is gone", async () => {
    const orderId = await paidOrder("cus_model_failed");
    // The carrier fails every attempt: the run fails for good after the capture.
    harness.easyPost.injectFailure("shipments.create", { kind: "server_error" }, 20);
    expect((await api(`/api/orders/${orderId}/release-hold`)).status).toBe(200);
    await waitFor(orderId, (order) => order.timeline.some((entry) => entry.kind === "run-failed"));
    harness.easyPost.clearFailures();

    const offered = await offersExactlyWhatTheModelAllows(orderId);
    expect(offered.has("redrive")).toBe(true);
    expect(await page.locator("[data-failed-step]").count()).toBeGreaterThan(0);

    await page.getByRole("link", { name: "Re-drive…", exact: true }).click();
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Re-drive requested.").waitFor();
    // The new run waits in its own window: released, it ships.
    await waitFor(orderId, (order) => order.holdReason === "fulfilment_window");
    expect((await api(`/api/orders/${orderId}/release-hold`)).status).toBe(200);
    await waitFor(orderId, (order) => order.status === "shipped");
    await page.reload();
    expect(await page.locator("[data-failed-step]").count()).toBe(0);
    expect([...(await offersExactlyWhatTheModelAllows(orderId))].sort()).toEqual(["cancel", "refund"]);
  }, 180_000);
});
