import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { createEmailRenderer } from "../../src/notifications/email-renderer";
import { emailTemplates, type EmailTemplateName } from "../../src/notifications/templates";
import { createCustomerLinks, deriveLinkSecret } from "../../src/pages";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { launchChromium, screenshotDir, startPublicEntrance, type PublicEntrance } from "./browser";

/**
 * The customer pages and the ops console in a real browser: Debian's Chromium driven by playwright-core
 * against the service as users run it (src/server.ts in a child process, the local engine and the Stripe
 * stand-in).
 */
describe("customer pages and ops console in Chromium", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;
  let shippedOrderId: string;
  /** Gates a test holds a stand-in's answer with; all opened at the end, whatever happened. */
  const releaseGates: (() => void)[] = [];

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    harness = await E2eHarness.start({
      env: { PUBLIC_URL: publicUrl, REVIEW_DELAY: "6s" },
    });
    entrance.forwardTo(harness.app.url);
    await harness.addProduct("MUG", 20, 1200);
    await harness.addProduct("TEE", 20, 2500);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    for (const release of releaseGates) release();
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  // Every Content-Security-Policy violation Chromium reports, in any page or frame of a test.
  let violations: string[] = [];
  afterEach(() => {
    expect(violations).toEqual([]);
    violations = [];
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    page.on("console", (message) => {
      if (/Content Security Policy|Refused to (load|apply|execute|frame|connect)/i.test(message.text())) {
        violations.push(`${page.url()}: ${message.text()}`);
      }
    });
    return page;
  }

  it("customer pays on the stand-in's page, watches the order ship without reloading, tracks it and reviews it once", async () => {
    const { orderId, checkoutUrl } = await harness.checkout("cus_browser", [
      { sku: "MUG", quantity: 2 },
      { sku: "TEE", quantity: 1 },
    ]);
    shippedOrderId = orderId;
    const page = await newPage();
    // The stand-in's own front page says what it is (not Express's "Cannot GET /").
    await page.goto(harness.stripeUrl);
    await page.getByRole("heading", { name: "Stripe stand-in" }).waitFor();
    await page.goto(checkoutUrl);
    await page.getByText("TEST MODE").waitFor();
    // Leaving the pay page: the cancel page shows the unpaid order and the way back.
    await page.getByRole("link", { name: "← Back to the shop (cancel)" }).click();
    await page.getByRole("heading", { name: "Checkout cancelled" }).waitFor();
    expect(page.url()).toMatch(/\/checkout\/cancelled\?order_id=.+&sig=/);
    await page.getByRole("link", { name: "Return to payment" }).click();
    await page.waitForURL(checkoutUrl);
    await page.screenshot({ path: path.join(screenshotDir, "stand-in-pay-page.png") });

    await page.getByRole("button", { name: "Pay (authorise card)" }).click();
    await page.waitForURL(/\/checkout\/success\?session_id=cs_test_/);
    await page.getByText("Thank you for your order").waitFor();
    // A marker that a reload would wipe: the status must change in place.
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await page.locator('#order-status[data-status="shipped"]').waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(
      true,
    );
    await page.screenshot({ path: path.join(screenshotDir, "customer-success-shipped.png"), fullPage: true });

    await page.getByRole("link", { name: "track your parcel" }).click();
    await page.getByRole("heading", { name: "Parcel tracking" }).waitFor();
    expect(await page.textContent("body")).toContain("Label created");
    await page.screenshot({ path: path.join(screenshotDir, "customer-tracking.png") });

    const reviewMail = await harness.eventually(async () => {
      const mail = harness.smtp.accepted.find((m) => (m.subject ?? "").startsWith("How was your order"));
      if (!mail) throw new Error("no review e-mail yet");
      return mail;
    }, 40_000);
    const reviewUrl = /href="([^"]+\/review\?sig=[^"]+)"/
      .exec(String(reviewMail.html))?.[1]
      ?.replace(/&amp;/g, "&");
    expect(reviewUrl).toBeDefined();
    await page.goto(reviewUrl as string);
    await page.getByRole("heading", { name: "How was your order?" }).waitFor();
    await page.check('input[name="rating"][value="4"]');
    await page.fill('textarea[name="comment"]', "Mugs arrived fine.");
    await page.screenshot({ path: path.join(screenshotDir, "customer-review.png") });
    await page.getByRole("button", { name: "Send review" }).click();
    await page.getByRole("heading", { name: "Thank you for your review" }).waitFor();

    // A second submission (say, from the back button) is refused and stores nothing.
    const second = await page.request.post(reviewUrl as string, { form: { rating: "1", comment: "again" } });
    expect(second.status()).toBe(409);
    const reviews = await harness.db.review.findMany({ where: { orderId } });
    expect(reviews).toEqual([expect.objectContaining({ rating: 4, comment: "Mugs arrived fine." })]);

    // Changing the id in a signed link finds nothing.
    const otherId = reviewUrl?.replace(orderId, "00000000-0000-4000-8000-000000000000") as string;
    expect((await page.request.get(otherId)).status()).toBe(404);
  }, 90_000);

  it("ops log in, find a failed order's failed step, cancel another, refund part of a third, re-send an e-mail; no cookie or no CSRF token is refused", async () => {
    // C: paid and shipped, to be refunded in part.
    const toRefund = await harness.checkout("cus_refund", [{ sku: "TEE", quantity: 2 }]);
    await harness.sandbox.completeCheckoutSession(toRefund.checkoutSessionId, "authorized");
    await harness.eventually(async () => {
      if ((await harness.order(toRefund.orderId)).status !== "shipped") throw new Error("C not shipped yet");
    });
    // A: the capture is declined, so its run fails at charge-card.
    harness.sandbox.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });
    const failed = await harness.checkout("cus_failed", [{ sku: "MUG", quantity: 1 }]);
    await harness.sandbox.completeCheckoutSession(failed.checkoutSessionId, "authorized");
    await harness.eventually(async () => {
      const order = await harness.order(failed.orderId);
      if (order.status !== "payment_failed" || !order.timeline.some((e) => e.kind === "step-failed"))
        throw new Error(`A is ${order.status}`);
    });
    // B: its capture hangs until ops have cancelled it (a gate, not a timer), so it is still
    // being fulfilled when they do.
    let releaseCapture = (): void => undefined;
    const captureGate = new Promise<void>((resolve) => (releaseCapture = resolve));
    releaseGates.push(releaseCapture);
    harness.sandbox.injectFailure("payment_intents.capture", { kind: "hang", until: captureGate });
    const toCancel = await harness.checkout("cus_cancel", [{ sku: "TEE", quantity: 1 }]);
    await harness.sandbox.completeCheckoutSession(toCancel.checkoutSessionId, "authorized");
    await harness.eventually(async () => {
      if ((await harness.order(toCancel.orderId)).status !== "fulfilling")
        throw new Error("B not claimed yet");
    });

    const page = await newPage();
    await page.goto(`${publicUrl}/ops`);
    await page.waitForURL(/\/ops\/login/);
    await page.fill('input[name="token"]', "not-the-token-at-all");
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByText("That token is not the admin token.").waitFor();
    await page.fill('input[name="token"]', adminToken);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${publicUrl}/ops`);
    const cookie = (await page.context().cookies()).find((c) => c.name === "ops_session");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict" });
    await page.screenshot({ path: path.join(screenshotDir, "ops-orders.png"), fullPage: true });

    await page.selectOption('select[name="attention"]', "payment_failed");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/attention=payment_failed/);
    const rows = page.locator("tbody tr");
    expect(await rows.count()).toBe(1);
    await rows.first().getByRole("link").click();
    await page.waitForURL(`${publicUrl}/ops/orders/${failed.orderId}`);
    const failedStep = page.locator('[data-failed-step="charge-card"]');
    await failedStep.waitFor();
    expect(await failedStep.textContent()).toMatch(/after 1\s+attempt\(s\):.*declined/i);
    const stepRow = page.locator('tr[data-step="charge-card"]');
    expect(await stepRow.getAttribute("data-step-status")).toBe("Failed");
    expect(await stepRow.textContent()).toMatch(/declined/i);
    await page.screenshot({ path: path.join(screenshotDir, "ops-failed-order.png"), fullPage: true });

    // Re-send the payment-failed e-mail: confirmed, recorded, and a second e-mail row exists.
    await page.getByRole("link", { name: "Re-send…" }).first().click();
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("E-mail re-sent.").waitFor();
    expect(await page.locator('li[data-kind="email-resent"]').count()).toBe(1);
    const emails = await harness.db.emailMessage.findMany({ where: { orderId: failed.orderId } });
    expect(emails.map((e) => e.idempotencyKey).sort()).toEqual([
      `payment-failed-${failed.orderId}`,
      `payment-failed-${failed.orderId}-resend-1`,
    ]);

    // Cancel B with a reason; the reason is on the timeline.
    await page.goto(`${publicUrl}/ops/orders/${toCancel.orderId}`);
    await page.getByRole("link", { name: "Cancel…" }).click();
    await page.fill('input[name="reason"]', "customer phoned");
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Cancellation requested.").waitFor();
    const cancelEntry = page.locator('li[data-kind="cancel-requested"]');
    expect(await cancelEntry.textContent()).toContain("customer phoned");
    releaseCapture();

    // Refund part of C (5.00 of 50.00): confirmed, done through the admin API's refunds, on the timeline.
    await page.goto(`${publicUrl}/ops/orders/${toRefund.orderId}`);
    await page.getByRole("link", { name: "Refund…" }).click();
    await page.fill('input[name="amount"]', "5.00");
    await page.fill('input[name="reason"]', "one shirt arrived torn");
    await page.getByRole("button", { name: "Confirm" }).click();
    await page.getByText("Refund requested.").waitFor();
    expect(await page.locator('li[data-kind="refund-issued"]').count()).toBe(1);
    expect((await harness.order(toRefund.orderId)).payment).toMatchObject({
      amountCaptured: 5000,
      amountRefunded: 500,
    });

    // Without the cookie: 401; with the cookie but without the CSRF token: 403. Nothing happens.
    const noCookie = await fetch(`${publicUrl}/ops/orders/${toCancel.orderId}/cancel`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "reason=x",
      redirect: "manual",
    });
    expect(noCookie.status).toBe(401);
    const noCsrf = await page.request.post(
      `${publicUrl}/ops/orders/${failed.orderId}/emails/${emails[0]?.id}/resend`,
      {
        form: { reason: "x" },
        maxRedirects: 0,
      },
    );
    expect(noCsrf.status()).toBe(403);
    expect(await harness.db.emailMessage.count({ where: { orderId: failed.orderId } })).toBe(2);

    // An e-mail inside the console: its HTML in a sandboxed frame that only our own page may show.
    await page.goto(`${publicUrl}/ops/orders/${failed.orderId}/emails/${emails[0]?.id}`);
    await page.frameLocator('iframe[title="E-mail"]').locator("body").filter({ hasText: /\S/ }).waitFor();

    // The same search as JSON for the admin API.
    const api = (query: string) =>
      fetch(`${publicUrl}/api/orders?${query}`, { headers: { authorization: `Bearer ${adminToken}` } });
    const attention = (await (await api("attention=payment_failed")).json()) as { orders: { id: string }[] };
    expect(attention.orders.map((o) => o.id)).toEqual([failed.orderId]);
    const byEmail = (await (await api("q=cus_cancel%40example.com")).json()) as { orders: { id: string }[] };
    expect(byEmail.orders.map((o) => o.id)).toEqual([toCancel.orderId]);
    const paged = (await (await api("limit=1")).json()) as { orders: unknown[]; nextCursor: string | null };
    expect(paged.orders).toHaveLength(1);
    const next = (await (await api(`limit=1&cursor=${paged.nextCursor}`)).json()) as {
      orders: { id: string }[];
    };
    expect(next.orders).toHaveLength(1);
    const bad = await api("status=lost");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("validation_failed");
    expect((await fetch(`${publicUrl}/api/orders`)).status).toBe(401);

    await page.getByRole("button", { name: "Log out" }).click();
    await page.goto(`${publicUrl}/ops`);
    await page.waitForURL(/\/ops\/login/);
  }, 90_000);

  it("renders every e-mail template for a real order, and every link in them answers 200", async () => {
    expect(shippedOrderId).toBeDefined();
    const links = createCustomerLinks({ publicUrl, secret: deriveLinkSecret(adminToken) });
    const renderer = createEmailRenderer({ db: harness.db, links });
    const hrefs = new Set<string>();
    for (const template of Object.keys(emailTemplates) as EmailTemplateName[]) {
      const content = await renderer.render(shippedOrderId, template);
      const found = [...content.html.matchAll(/href="([^"]+)"/g)].map((m) =>
        (m[1] ?? "").replace(/&amp;/g, "&"),
      );
      expect(found.length).toBeGreaterThan(0);
      for (const href of found) {
        hrefs.add(href);
        expect(content.text).toContain(href);
      }
    }
    expect(hrefs.size).toBeGreaterThanOrEqual(3);
    // With SMTP_URL set (as here) there is no dev inbox.
    expect((await fetch(`${publicUrl}/dev/outbox`)).status).toBe(404);
    for (const href of hrefs) {
      const res = await fetch(href);
      expect({ href, status: res.status }).toEqual({ href, status: 200 });
    }
  }, 60_000);
});
