import type { Browser } from "playwright-core";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { launchChromium, logInToConsole, startPublicEntrance, type PublicEntrance } from "./browser";

jest.setTimeout(240_000);

const shipping = {
  name: "Ada Lovelace",
  address: { line1: "1 Main St", city: "Springfield", state: "IL", postal_code: "62701", country: "US" },
};

/**
 * The console's webhooks page, with the service as users run it (src/server.ts in a child
 * process): an endpoint registered through the admin API receives a paid order's
 * `shop/order.paid.v1`; the page lists the endpoint and its delivery; "Send again" sends one more
 * attempt with the same webhook-id, and the log shows both attempts.
 */
describe("ops console: webhook endpoints and their delivery log", () => {
  let h: E2eHarness;
  let browser: Browser;
  let entrance: PublicEntrance;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    h = await E2eHarness.start({ env: { PUBLIC_URL: entrance.url, SHIPPING_COUNTRIES: "US" } });
    entrance.forwardTo(h.app.url);
    await h.addProduct("HOOK-MUG", 20, 1200);
    receiver = await startWebhookReceiver();
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await entrance?.close();
    await receiver?.close();
  });

  it("lists the endpoint's deliveries and sends one again with the same webhook-id", async () => {
    const created = await fetch(`${h.app.url}/api/admin/webhook-endpoints`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url, eventTypes: ["shop/order.paid.v1"], description: "ERP" }),
    });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()) as { id: string; secret: string };

    const { orderId, checkoutSessionId } = await h.checkout("cus_webhook_page", [
      { sku: "HOOK-MUG", quantity: 1 },
    ]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });
    await h.eventually(async () => expect(receiver.verified(endpoint.secret)).toHaveLength(1), 60_000);
    const [first] = receiver.verified(endpoint.secret);
    expect(first?.payload).toMatchObject({ type: "shop/order.paid.v1", data: { orderId } });

    const page = await logInToConsole(browser, entrance.url);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(`${entrance.url}/ops/webhooks`);
    const card = page.locator(`[data-endpoint="${endpoint.id}"]`);
    await expect(card.locator("h2").textContent()).resolves.toContain(receiver.url);
    const row = card.locator(`tr[data-status="delivered"]`);
    expect(await row.count()).toBe(1);
    expect(await row.locator('[data-field="attempt"]').count()).toBe(1);
    expect(await row.locator("code").textContent()).toBe(first?.webhookId);

    await row.getByRole("button", { name: "Send again" }).click();
    await page.waitForURL(/\/ops\/webhooks\?sent=/);
    await expect(page.locator(".notice").textContent()).resolves.toContain(first?.webhookId ?? "?");
    await h.eventually(async () => expect(receiver.verified(endpoint.secret)).toHaveLength(2), 60_000);
    expect(receiver.receipts.map((r) => r.webhookId)).toEqual([first?.webhookId, first?.webhookId]);

    await h.eventually(async () => {
      await page.goto(`${entrance.url}/ops/webhooks`);
      const attempts = page.locator(`[data-endpoint="${endpoint.id}"] [data-field="attempt"]`);
      expect(await attempts.count()).toBe(2);
      expect(await attempts.nth(1).textContent()).toContain("(sent again)");
    }, 30_000);
  });
});
