import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { E2eHarness } from "../e2e/e2e-harness";
import { startWebhookReceiver } from "../support/webhook-receiver";
import {
  launchChromium,
  logInToConsole,
  screenshotDir,
  startPublicEntrance,
  type PublicEntrance,
} from "./browser";

jest.setTimeout(240_000);

const shipping = {
  name: "Ada Lovelace",
  address: { line1: "1 Main St", city: "Springfield", state: "IL", postal_code: "62701", country: "US" },
};

/**
 * The console's webhooks page, with the service as users run it (src/server.ts in a child
 * process), managed from the browser only (decision 0205): an endpoint created with its URL and
 * event types shows its secret once; a paid order's `shop/order.paid.v1` reaches it signed with
 * that secret; the delivery log shows the attempt and "Send again" sends one more with the same
 * webhook-id; the secret is rotated (both sign during the overlap); the endpoint is disabled and
 * enabled again. A refused form says why and creates nothing.
 */
describe("ops console: webhook endpoints managed from the page, with their delivery log", () => {
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

  const openWebhooks = async (page: Page) => {
    await page.goto(`${entrance.url}/ops/webhooks`);
    return page;
  };

  it("creates an endpoint, shows its secret once, delivers, sends again, rotates, disables and enables", async () => {
    const page = await logInToConsole(browser, entrance.url);
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.waitForURL(`${entrance.url}/ops/webhooks`);

    // A post without the page's CSRF token (another site's form, with the session cookie): 403.
    const forged = await page.request.post(`${entrance.url}/ops/webhooks/endpoints`, {
      form: { url: receiver.url, eventTypes: "shop/order.paid.v1" },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    expect(await h.db.webhookEndpoint.count()).toBe(0);

    // Refused: no event type chosen. The page says why; nothing is created.
    const form = page.locator('[data-form="new-endpoint"]');
    await form.getByLabel("URL").fill(receiver.url);
    const refused = page.waitForResponse((r) => r.url().endsWith("/ops/webhooks/endpoints"));
    await form.getByRole("button", { name: "Create endpoint" }).click();
    expect((await refused).status()).toBe(400);
    await expect(page.locator(".notice.bad").textContent()).resolves.toMatch(/at least one event type/);
    expect(await h.db.webhookEndpoint.count()).toBe(0);
    // The form keeps what was typed.
    expect(await page.locator('[data-form="new-endpoint"] input[name="url"]').inputValue()).toBe(
      receiver.url,
    );

    await page.locator('[data-form="new-endpoint"] input[name="description"]').fill("ERP");
    await page.locator('[data-form="new-endpoint"]').getByLabel("shop/order.paid.v1").check();
    const created = page.waitForResponse((r) => r.url().endsWith("/ops/webhooks/endpoints"));
    await page.locator('[data-form="new-endpoint"]').getByRole("button", { name: "Create endpoint" }).click();
    expect((await created).status()).toBe(201);
    const secret = (await page.locator('[data-field="secret"]').textContent()) ?? "";
    expect(secret).toMatch(/^whsec_/);
    const endpointId = (await page.locator("[data-secret-for]").getAttribute("data-secret-for")) ?? "";
    const card = page.locator(`[data-endpoint="${endpointId}"]`);
    await expect(card.locator("h2").textContent()).resolves.toContain(receiver.url);
    await expect(card.locator("p.small").first().textContent()).resolves.toContain("ERP");

    // Shown once: the page read again does not hold it, nor does the database in clear.
    await openWebhooks(page);
    expect(await page.content()).not.toContain(secret);
    const row = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } });
    expect(row.secret).toMatch(/^enc:v1:/);

    // A paid order: one delivery, signed with that secret.
    const { orderId, checkoutSessionId } = await h.checkout("cus_webhook_page", [
      { sku: "HOOK-MUG", quantity: 1 },
    ]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });
    await h.eventually(async () => expect(receiver.verified(secret)).toHaveLength(1), 60_000);
    const [first] = receiver.verified(secret);
    expect(first?.payload).toMatchObject({ type: "shop/order.paid.v1", data: { orderId } });

    // The delivery log: delivered, one attempt, its webhook-id.
    const delivered = await h.eventually(async () => {
      await openWebhooks(page);
      const line = page.locator(`[data-endpoint="${endpointId}"] tr[data-status="delivered"]`);
      expect(await line.count()).toBe(1);
      return line;
    }, 30_000);
    expect(await delivered.locator('[data-field="attempt"]').count()).toBe(1);
    expect(await delivered.locator("code").textContent()).toBe(first?.webhookId);

    // Rotate: a new secret shown once; during the overlap both sign.
    await card.getByRole("button", { name: "Rotate secret" }).click();
    const rotated = (await page.locator('[data-field="secret"]').textContent()) ?? "";
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await expect(page.locator("[data-secret-for]").textContent()).resolves.toContain(
      "previous secret keeps signing",
    );
    await expect(card.locator('[data-field="overlap"]').count()).resolves.toBe(1);

    // Send again: the same webhook-id, verified by the old and the new secret.
    await page
      .locator(`[data-endpoint="${endpointId}"] tr[data-status="delivered"]`)
      .getByRole("button", { name: "Send again" })
      .click();
    await page.waitForURL(/\/ops\/webhooks\?sent=/);
    await expect(page.locator(".notice").first().textContent()).resolves.toContain(first?.webhookId ?? "?");
    await h.eventually(async () => expect(receiver.verified(rotated)).toHaveLength(1), 60_000);
    expect(receiver.verified(secret)).toHaveLength(2);
    expect(receiver.receipts.map((r) => r.webhookId)).toEqual([first?.webhookId, first?.webhookId]);
    await h.eventually(async () => {
      await openWebhooks(page);
      const attempts = page.locator(`[data-endpoint="${endpointId}"] [data-field="attempt"]`);
      expect(await attempts.count()).toBe(2);
      expect(await attempts.nth(1).textContent()).toContain("(sent again)");
    }, 30_000);
    await page.screenshot({ path: path.join(screenshotDir, "ops-webhooks.png"), fullPage: true });

    // Disable: the page says so; "send again" is then refused with a clear 409, nothing sent.
    await page.locator(`[data-endpoint="${endpointId}"]`).getByRole("button", { name: "Disable" }).click();
    await page.waitForURL(/changed=disabled/);
    const disabledCard = page.locator(`[data-endpoint="${endpointId}"]`);
    await expect(disabledCard.locator('[data-field="enabled"]').textContent()).resolves.toMatch(
      /disabled: disabled through the ops console/,
    );
    const sends = receiver.receipts.length;
    const refusedSend = page.waitForResponse((r) => r.url().includes("/send-again"));
    await disabledCard.getByRole("button", { name: "Send again" }).first().click();
    expect((await refusedSend).status()).toBe(409);
    await expect(page.locator(".notice.bad").textContent()).resolves.toMatch(/disabled/);
    expect(receiver.receipts).toHaveLength(sends);

    // Bad input from a hand-made form (with the page's CSRF token): a clear 4xx, nothing changed.
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const before = await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } });
    const badToggle = await page.request.post(
      `${entrance.url}/ops/webhooks/endpoints/${endpointId}/enabled`,
      {
        form: { _csrf: csrf, enabled: "maybe" },
        maxRedirects: 0,
      },
    );
    expect(badToggle.status()).toBe(400);
    const unknown = await page.request.post(
      `${entrance.url}/ops/webhooks/endpoints/00000000-0000-4000-8000-000000000000/rotate-secret`,
      { form: { _csrf: csrf }, maxRedirects: 0 },
    );
    expect(unknown.status()).toBe(404);
    expect(await unknown.text()).not.toContain("whsec_");
    const badUrl = await page.request.post(`${entrance.url}/ops/webhooks/endpoints`, {
      form: { _csrf: csrf, url: "ftp://erp.example.com/x", eventTypes: "shop/order.paid.v1" },
      maxRedirects: 0,
    });
    expect(badUrl.status()).toBe(400);
    expect(await h.db.webhookEndpoint.findMany()).toEqual([before]);

    await page.locator(`[data-endpoint="${endpointId}"]`).getByRole("button", { name: "Enable" }).click();
    await page.waitForURL(/changed=enabled/);
    await expect(
      page.locator(`[data-endpoint="${endpointId}"] [data-field="enabled"]`).textContent(),
    ).resolves.toBe("enabled");
    expect((await h.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } })).enabled).toBe(true);
  });
});
