import path from "node:path";
import type { Browser } from "playwright-core";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { launchChromium, screenshotDir, startPublicEntrance, type PublicEntrance } from "./browser";

interface DisputeView {
  providerId: string;
  status: string;
  amount: number;
  reason: string;
  evidenceDueBy: string | null;
  amountWithdrawn: number;
  amountReinstated: number;
}
interface PaymentView {
  amountDisputeWithdrawn: number;
  amountDisputeReinstated: number;
  disputes: DisputeView[];
}

/**
 * Disputes and their outcome on the order, as the admin API and the console show them: opened at
 * the Stripe stand-in (as Stripe's dispute test cards do), decided there (won: the money comes
 * back; lost: it stays withdrawn), every event redelivered once more, one row per dispute.
 */
describe("ops console and admin API: an order's disputes and their outcome", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;

  beforeAll(async () => {
    // The public address listens for the whole file; the app picks its own port behind it.
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    harness = await E2eHarness.start({ env: { PUBLIC_URL: publicUrl } });
    entrance.forwardTo(harness.app.url);
    await harness.addProduct("DISPUTED", 20, 3100);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  async function shippedOrder(customerId: string) {
    const { orderId, checkoutSessionId } = await harness.checkout(customerId, [
      { sku: "DISPUTED", quantity: 1 },
    ]);
    await harness.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    return harness.eventually(async () => {
      const order = await harness.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    }, 60_000);
  }

  const paymentOf = async (orderId: string): Promise<PaymentView> => {
    const res = await fetch(`${publicUrl}/api/orders/${orderId}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { payment: PaymentView }).payment;
  };

  it("shows the money withdrawn and reinstated in the payment, and each dispute's status, amount, reason and due date", async () => {
    const won = await shippedOrder("cus_dispute_won");
    const lost = await shippedOrder("cus_dispute_lost");
    const opened = await harness.sandbox.dispute({
      paymentIntent: won.paymentIntentId as string,
      reason: "product_not_received",
    });
    const openedLost = await harness.sandbox.dispute({
      paymentIntent: lost.paymentIntentId as string,
      reason: "fraudulent",
    });

    const open = await harness.eventually(async () => {
      const payment = await paymentOf(won.id);
      expect(payment.disputes).toHaveLength(1);
      expect(payment.amountDisputeWithdrawn).toBe(3100);
      return payment.disputes[0] as DisputeView;
    });
    expect(open).toMatchObject({
      providerId: opened.dispute.id,
      status: "needs_response",
      amount: 3100,
      reason: "product_not_received",
      evidenceDueBy: new Date((opened.dispute.evidence_details.due_by ?? 0) * 1000).toISOString(),
      amountWithdrawn: 3100,
      amountReinstated: 0,
    });

    const closedWon = await harness.sandbox.closeDispute(opened.dispute.id, "won");
    const closedLost = await harness.sandbox.closeDispute(openedLost.dispute.id, "lost");
    expect(closedWon.events.map((e) => e.type)).toEqual([
      "charge.dispute.funds_reinstated",
      "charge.dispute.closed",
    ]);
    await harness.eventually(async () => {
      const payment = await paymentOf(won.id);
      expect(payment.disputes.map((d) => d.status)).toEqual(["won"]);
      expect(payment.amountDisputeReinstated).toBe(3100);
      expect(payment.amountDisputeWithdrawn).toBe(3100);
      expect((await paymentOf(lost.id)).disputes.map((d) => d.status)).toEqual(["lost"]);
    });

    // Stripe repeats itself, late and out of order: the opening events again after the close.
    for (const event of [...opened.events, ...closedWon.events, ...closedLost.events]) {
      expect((await harness.sandbox.redeliver(event.id)).status).toBe(200);
    }
    const settled = await paymentOf(won.id);
    expect(settled.disputes).toHaveLength(1);
    expect(settled.disputes[0]).toMatchObject({
      status: "won",
      amountWithdrawn: 3100,
      amountReinstated: 3100,
    });
    expect(await harness.db.dispute.count({ where: { providerId: opened.dispute.id } })).toBe(1);

    const context = await browser.newContext({ viewport: { width: 1100, height: 1200 } });
    const page = await context.newPage();
    await page.goto(`${publicUrl}/ops/login`);
    await page.fill('input[name="token"]', adminToken);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(`${publicUrl}/ops`);

    await page.goto(`${publicUrl}/ops/orders/${won.id}`);
    const row = page.locator("table.disputes tbody tr");
    await row.waitFor();
    expect(await row.count()).toBe(1);
    const cells = await row.locator("td").allInnerTexts();
    expect(cells[0]).toBe(opened.dispute.id);
    expect(cells[1]).toBe("won");
    expect(cells[2]).toMatch(/31\.00/);
    expect(cells[3]).toBe("product_not_received");
    expect(cells[4]).not.toBe("—");
    expect(cells[5]).toMatch(/31\.00/);
    expect(cells[6]).toMatch(/31\.00/);
    await page.getByText(/withdrawn .*31\.00 · reinstated .*31\.00/).waitFor();
    await page.screenshot({ path: path.join(screenshotDir, "order-dispute-won.png"), fullPage: true });

    await page.goto(`${publicUrl}/ops/orders/${lost.id}`);
    const lostCells = await page.locator("table.disputes tbody tr td").allInnerTexts();
    expect(lostCells.slice(1, 4)).toEqual(["lost", expect.stringMatching(/31\.00/), "fraudulent"]);
    expect(lostCells[6]).toMatch(/0\.00/);
    await context.close();
  });
});
