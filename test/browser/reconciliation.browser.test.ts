import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import type { ReconciliationReport } from "../../src/reconciliation";
import { createEasyPostClient } from "../../src/shipping";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { launchChromium, screenshotDir, startPublicEntrance, type PublicEntrance } from "./browser";

jest.setTimeout(240_000);

const run = promisify(execFile);

const shipping = {
  name: "Ada Lovelace",
  address: { line1: "1 Main St", city: "Springfield", state: "IL", postal_code: "62701", country: "US" },
};

/**
 * The daily reconciliation against the Stripe and EasyPost stand-ins, with the service as users run
 * it (src/server.ts in a child process): a day of orders reconciles to 0 mismatches; a Dashboard
 * refund whose webhooks were lost, a capture changed at Stripe and a label bought outside the
 * service are then exactly the three mismatches, each with both sides' values, and the admin API,
 * the CLI and the console (Chromium) show the same report.
 */
describe("daily reconciliation against Stripe and the carrier", () => {
  let h: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  const today = new Date().toISOString().slice(0, 10);

  let entrance: PublicEntrance;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    h = await E2eHarness.start({ env: { PUBLIC_URL: publicUrl, SHIPPING_COUNTRIES: "US" } });
    entrance.forwardTo(h.app.url);
    await h.addProduct("RECON-MUG", 50, 1200);
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await entrance?.close();
  });

  const admin = (route: string, init: RequestInit = {}) =>
    fetch(`${h.app.url}${route}`, {
      ...init,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json", ...init.headers },
    });

  async function shippedOrder(customerId: string, quantity: number): Promise<string> {
    const { orderId, checkoutSessionId } = await h.checkout(customerId, [{ sku: "RECON-MUG", quantity }]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });
    await h.eventually(async () => expect((await h.order(orderId)).status).toBe("shipped"), 60_000);
    return orderId;
  }

  async function reconcile(date: string): Promise<ReconciliationReport> {
    const res = await admin("/api/reconciliation/runs", { method: "POST", body: JSON.stringify({ date }) });
    expect(res.status).toBe(201);
    return (await res.json()) as ReconciliationReport;
  }

  const reconciliationAlerts = () =>
    h.slack.bodies.filter((body) => JSON.stringify(body).includes("Reconciliation of"));

  const cliEnv = () => ({
    // eslint-disable-next-line no-restricted-properties -- the child needs the PATH to find node
    PATH: process.env.PATH ?? "",
    NODE_ENV: "test",
    LOG_LEVEL: "silent",
    DATABASE_URL: h.database.url,
    STRIPE_SECRET_KEY: "sk_test_e2e",
    STRIPE_API_BASE: h.stripeUrl,
    EASYPOST_API_KEY: "EZTK_e2e",
    EASYPOST_API_BASE: h.easyPost.apiBase as string,
    PUBLIC_URL: publicUrl,
    SLACK_WEBHOOK_URL: h.slack.url,
  });
  const cli = (...args: string[]) =>
    run(path.resolve("node_modules/.bin/tsx"), ["scripts/reconcile.ts", ...args], { env: cliEnv() });

  let paid: string;
  let partlyRefunded: string;
  let report: ReconciliationReport;

  it("a day of orders (paid, refunded in part and in full, cancelled) reconciles to 0 mismatches", async () => {
    paid = await shippedOrder("cus_recon_paid", 1);
    partlyRefunded = await shippedOrder("cus_recon_part", 2);
    const fullyRefunded = await shippedOrder("cus_recon_full", 1);
    const part = await admin(`/api/orders/${partlyRefunded}/refund`, {
      method: "POST",
      body: JSON.stringify({ amount: 500, reason: "one mug chipped" }),
    });
    expect(part.status).toBe(201);
    const full = await admin(`/api/orders/${fullyRefunded}/refund`, { method: "POST", body: "{}" });
    expect(full.status).toBe(201);

    // Cancelled while its capture hangs at Stripe: the authorization is voided, nothing is booked.
    h.sandbox.injectFailure("payment_intents.capture", { kind: "hang", ms: 15_000 });
    const cancelled = await h.checkout("cus_recon_cancel", [{ sku: "RECON-MUG", quantity: 1 }]);
    await h.sandbox.completeCheckoutSession(cancelled.checkoutSessionId, "authorized", { shipping });
    await h.eventually(async () => expect((await h.order(cancelled.orderId)).status).toBe("fulfilling"));
    const cancel = await admin(`/api/orders/${cancelled.orderId}/cancel`, { method: "POST", body: "{}" });
    expect(cancel.status).toBe(202);
    await h.eventually(async () => {
      const order = await h.order(cancelled.orderId);
      expect(order.status).toBe("cancelled");
      expect(order.payment?.status).toBe("voided");
    }, 60_000);
    await h.sandbox.deliveriesSettled();

    report = await reconcile(today);
    expect(report).toMatchObject({ date: today, timeZone: "UTC", ranBy: "admin-api", mismatchCount: 0 });
    expect(report.mismatches).toEqual([]);
    // Three captures and two refunds at Stripe, with Stripe's fees, beside our own totals.
    expect(report.stripeTransactions).toBe(5);
    expect(report.carrierShipments).toBe(3);
    const usd = report.totals.usd;
    expect(usd?.stripe.charges).toBe(1200 + 2400 + 1200);
    expect(usd?.stripe.refunds).toBe(-(500 + 1200));
    expect(usd?.stripe.fees).toBe(65 + 100 + 65);
    expect(usd?.stripe.net).toBe(4800 - 1700 - 230);
    expect(usd?.ours).toEqual({ captured: 4800, refunded: 1700 });
    expect(reconciliationAlerts()).toHaveLength(0);
  });

  it("finds exactly a lost refund webhook, a changed capture and an orphan label, with both sides' values", async () => {
    const paidOrder = await h.order(paid);
    const changed = await h.order(partlyRefunded);
    // Stripe's Events API is down from here to the end of the file: the missed-webhook sweep fires
    // on the real clock (every 15 minutes) and would otherwise recover the very refund whose lost
    // webhooks this report is about, whenever a quarter hour happened to fall in the test.
    h.sandbox.injectFailure("events.list", { kind: "server_error" }, 10_000);
    const lost = await h.sandbox.refund(
      { paymentIntent: paidOrder.paymentIntentId as string, amount: 300 },
      { deliver: false },
    );
    h.sandbox.amendCapture(changed.paymentIntentId as string, 2000);
    const easyPost = await createEasyPostClient({
      apiKey: "EZTK_e2e",
      apiBase: h.easyPost.apiBase as string,
    });
    const address = { street1: "9 Elm St", city: "Springfield", state: "IL", zip: "62701", country: "US" };
    const orphan = await easyPost.Shipment.create({
      to_address: address,
      from_address: address,
      parcel: { weight: 10 },
    });
    const bought = await easyPost.Shipment.buy(
      orphan.id,
      orphan.rates[0] as NonNullable<(typeof orphan.rates)[0]>,
    );

    const again = await reconcile(today);
    expect(again.id).toBe(report.id); // one report per day: the re-run replaced it
    expect(again.mismatchCount).toBe(3);
    expect(again.counts).toEqual({ refund_not_recorded: 1, capture_differs: 1, label_without_shipment: 1 });
    const byKind = Object.fromEntries(again.mismatches.map((m) => [m.kind, m]));
    expect(byKind.refund_not_recorded).toMatchObject({
      orderId: paid,
      reference: lost.refund.id,
      ours: { refunded: 0, status: "shipped" },
      theirs: { refund: lost.refund.id, amount: 300, currency: "usd" },
      link: `${publicUrl}/ops/orders/${paid}`,
    });
    expect(byKind.capture_differs).toMatchObject({
      orderId: partlyRefunded,
      ours: { amount: 2400, currency: "usd" },
      theirs: { amount: 2000, currency: "usd" },
    });
    expect(byKind.label_without_shipment).toMatchObject({
      orderId: null,
      reference: bought.id,
      ours: null,
      theirs: { shipment: bought.id, trackingCode: bought.tracking_code },
    });

    // One Slack message, with the counts and the report's link.
    await h.eventually(async () => expect(reconciliationAlerts()).toHaveLength(1));
    const alert = JSON.stringify(reconciliationAlerts()[0]);
    expect(alert).toContain("3 mismatches");
    expect(alert).toContain(`${publicUrl}/ops/reconciliation/${again.id}`);
    expect(alert).toContain("capture_differs");

    // The API reads back the same report, by id and by date.
    const byId = await admin(`/api/reconciliation/runs/${again.id}`);
    expect(await byId.json()).toEqual(again);
    const byDate = await admin(`/api/reconciliation/runs?date=${today}`);
    const { runs } = (await byDate.json()) as { runs: unknown[] };
    expect(runs).toEqual([expect.objectContaining({ id: again.id, mismatchCount: 3 })]);
    report = again;
  });

  it("refuses bad input through the API and the CLI, changing nothing", async () => {
    // No date at all is today's run (test/reconciliation/run-today.test.ts), not bad input.
    for (const body of [
      { date: "2026-02-30" },
      { date: "yesterday" },
      { date: 20260201 },
      { date: today, extra: 1 },
    ]) {
      const res = await admin("/api/reconciliation/runs", { method: "POST", body: JSON.stringify(body) });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: "validation_failed" } });
    }
    const missing = await admin("/api/reconciliation/runs/00000000-0000-4000-8000-000000000000");
    expect(missing.status).toBe(404);
    const unauthorised = await fetch(`${h.app.url}/api/reconciliation/runs`);
    expect(unauthorised.status).toBe(401);

    await expect(cli("--date", "2026-13-01")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("reconcile failed: date: expected a calendar day as YYYY-MM-DD"),
    });
    await expect(cli("--date")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("usage: npm run reconcile [-- --date YYYY-MM-DD]"),
    });
    const unchanged = (await (
      await admin(`/api/reconciliation/runs/${report.id}`)
    ).json()) as ReconciliationReport;
    expect(unchanged).toEqual(report);
  });

  it("the CLI reconciles the same day into the same report the API then reads", async () => {
    const { stdout, stderr } = await cli("--date", today);
    expect(stderr).toContain(`reconciled ${today} (UTC): 3 mismatch(es)`);
    const printed = JSON.parse(stdout) as ReconciliationReport;
    expect(printed).toMatchObject({ id: report.id, ranBy: "cli", mismatchCount: 3 });
    expect(printed.mismatches).toEqual(report.mismatches);
    expect(printed.totals).toEqual(report.totals);
    expect(await (await admin(`/api/reconciliation/runs/${report.id}`)).json()).toEqual(printed);
    report = printed;
  });

  it("the console shows the same report and lists the orders involved under Needs attention", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1300, height: 900 } })).newPage();
    await page.goto(`${publicUrl}/ops/reconciliation`);
    await page.waitForURL(/\/ops\/login/);
    await page.fill('input[name="token"]', adminToken);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/ops\/reconciliation$/);
    await page.getByRole("link", { name: today }).click();
    await page.waitForURL(`${publicUrl}/ops/reconciliation/${report.id}`);
    expect(await page.locator("#mismatch-count").getAttribute("data-count")).toBe("3");

    const rows = page.locator("#mismatches tbody tr");
    expect(await rows.count()).toBe(3);
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => ({
        kind: tr.getAttribute("data-kind"),
        reference: tr.getAttribute("data-reference"),
        ours: tr.querySelector('[data-field="ours"]')?.textContent,
        theirs: tr.querySelector('[data-field="theirs"]')?.textContent,
      })),
    );
    const show = (value: unknown) => (value === null ? "—" : JSON.stringify(value));
    expect(shown).toEqual(
      report.mismatches.map((m) => ({
        kind: m.kind,
        reference: m.reference,
        ours: show(m.ours),
        theirs: show(m.theirs),
      })),
    );
    const fees = await page.locator('tr[data-currency="usd"] [data-field="fees"]').textContent();
    expect(fees).toContain(((report.totals.usd?.stripe.fees ?? 0) / 100).toFixed(2));
    await page.screenshot({ path: path.join(screenshotDir, "ops-reconciliation.png"), fullPage: true });

    // Running the day again from the console keeps the same report.
    await page.getByRole("button", { name: "Run this day again" }).click();
    await page.waitForURL(`${publicUrl}/ops/reconciliation/${report.id}`);
    const rerun = (await (
      await admin(`/api/reconciliation/runs/${report.id}`)
    ).json()) as ReconciliationReport;
    expect(rerun).toMatchObject({ ranBy: "ops-console", mismatches: report.mismatches });

    await page.getByRole("link", { name: "The orders involved, in Needs attention" }).click();
    await page.waitForURL(/attention=reconciliation/);
    const listed = await page
      .locator("tbody tr a[href^='/ops/orders/']")
      .evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    expect(new Set(listed)).toEqual(new Set([`/ops/orders/${paid}`, `/ops/orders/${partlyRefunded}`]));
  });
});
