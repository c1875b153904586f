import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { adminToken, E2eHarness } from "../e2e/e2e-harness";
import { launchChromium, screenshotDir, startPublicEntrance, type PublicEntrance } from "./browser";

/**
 * The catalog's console pages in Chromium, against the service as users run it: a product made,
 * edited, refused a bad edit, given stock, counted, found in the low-stock list and archived.
 */
describe("products and stock pages of the ops console in Chromium", () => {
  let harness: E2eHarness;
  let browser: Browser;
  let publicUrl: string;
  let entrance: PublicEntrance;

  beforeAll(async () => {
    entrance = await startPublicEntrance();
    publicUrl = entrance.url;
    harness = await E2eHarness.start({ env: { PUBLIC_URL: publicUrl } });
    entrance.forwardTo(harness.app.url);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await entrance?.close();
  });

  async function loggedIn(): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 900 } })).newPage();
    await page.goto(`${publicUrl}/ops/products`);
    await page.waitForURL(/\/ops\/login/);
    await page.fill('input[name="token"]', adminToken);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(/\/ops/);
    await page.goto(`${publicUrl}/ops/products`);
    return page;
  }

  it("creates a product, edits it, records stock movements and archives it", async () => {
    const page = await loggedIn();
    await page.getByRole("heading", { name: "Products" }).waitFor();
    await page.getByRole("link", { name: "New product" }).click();
    await page.fill('input[name="sku"]', "LAMP-B");
    await page.fill('input[name="name"]', "Browser lamp");
    // Prices are typed as people read them, in dollars; the catalog keeps cents.
    await page.fill('input[name="unitPrice"]', "42.00");
    await page.fill('input[name="currency"]', "usd");
    await page.fill('input[name="weightOz"]', "40");
    await page.fill('input[name="lowStockThreshold"]', "5");
    await page.fill('input[name="stockOnHand"]', "12");
    await page.getByRole("button", { name: "Create" }).click();
    await page.getByText("Product created.").waitFor();
    expect(await page.getByTestId("stock-on-hand").textContent()).toBe("12");

    // A bad edit is refused on the page, naming the field, and changes nothing.
    await page.fill('input[name="unitPrice"]', "-5");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText(/price: "-5" is not an amount in USD/).waitFor();
    await page.fill('input[name="unitPrice"]', "45");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved.").waitFor();
    expect(await page.inputValue('input[name="unitPrice"]')).toBe("45.00");

    await page.selectOption('select[name="reason"]', "received");
    await page.fill('input[name="quantity"]', "8");
    await page.fill('input[name="note"]', "delivery 42");
    await page.getByRole("button", { name: "Record" }).click();
    await page.getByText("Recorded received +8: 20 on hand.").waitFor();

    await page.selectOption('select[name="reason"]', "counted");
    await page.fill('input[name="quantity"]', "4");
    await page.getByRole("button", { name: "Record" }).click();
    await page.getByText("Recorded counted -16: 4 on hand.").waitFor();
    expect(await page.locator("tr.movement").count()).toBe(3);
    await page.screenshot({ path: path.join(screenshotDir, "ops-product-stock.png"), fullPage: true });

    await page.selectOption('select[name="reason"]', "written-off");
    await page.fill('input[name="quantity"]', "50");
    await page.getByRole("button", { name: "Record" }).click();
    await page.getByText(/would go below zero/).waitFor();

    await page.goto(`${publicUrl}/ops/products?low=true`);
    await page.locator('tr[data-sku="LAMP-B"]').waitFor();
    await page.screenshot({ path: path.join(screenshotDir, "ops-products-low.png"), fullPage: true });

    await page.getByRole("link", { name: "LAMP-B" }).click();
    await page.getByRole("button", { name: "Archive (stop selling)" }).click();
    await page.getByText("Archived: no new checkout.").waitFor();
    const products = (await (await fetch(`${publicUrl}/api/products`)).json()) as {
      products: { sku: string }[];
    };
    expect(products.products.map((p) => p.sku)).not.toContain("LAMP-B");

    const product = await harness.db.product.findUniqueOrThrow({ where: { sku: "LAMP-B" } });
    const sum = await harness.db.stockMovement.aggregate({ where: { sku: "LAMP-B" }, _sum: { delta: true } });
    expect([product.stockOnHand, product.unitPrice, product.weightOz]).toEqual([4, 4500, 40]);
    expect(sum._sum.delta).toBe(4);
  });

  it("exports and imports the catalog as CSV from the console, formulas escaped both ways", async () => {
    const page = await loggedIn();
    await page.getByRole("link", { name: "Import CSV" }).click();
    await page.getByRole("heading", { name: "Import products from CSV" }).waitFor();
    const csv = [
      "sku,name,unitPrice,currency,stockOnHand",
      'CSV-B1,"=HYPERLINK(""http://x.example"")",1999,usd,3',
      "CSV-B2,Yen cup,1250,jpy,2",
    ].join("\n");
    await page.fill('textarea[name="csv"]', csv);
    await page.getByRole("button", { name: "Preview" }).click();
    await page.getByText("Preview: nothing changed yet · 2 new, 0 changed, 0 unchanged").waitFor();
    expect(await harness.db.product.count({ where: { sku: { startsWith: "CSV-B" } } })).toBe(0);
    await page.getByRole("button", { name: "Import" }).click();
    await page.getByText("Imported · 2 new, 0 changed, 0 unchanged").waitFor();
    const imported = await harness.db.product.findUniqueOrThrow({ where: { sku: "CSV-B1" } });
    expect([imported.name, imported.unitPrice, imported.stockOnHand]).toEqual([
      '=HYPERLINK("http://x.example")',
      1999,
      3,
    ]);

    // The yen product's price shows without decimals, and is edited as whole yen.
    await page.goto(`${publicUrl}/ops/products/CSV-B2`);
    expect(await page.inputValue('input[name="unitPrice"]')).toBe("1250");

    await page.goto(`${publicUrl}/ops/products`);
    const exportLink = page.getByRole("link", { name: "Export CSV" });
    expect(await exportLink.getAttribute("href")).toBe("/ops/products/export.csv");
    const exported = await page.request.get(`${publicUrl}/ops/products/export.csv`);
    expect(exported.headers()["content-type"]).toMatch(/^text\/csv/);
    const text = await exported.text();
    expect(text).toContain(`CSV-B1,"'=HYPERLINK(""http://x.example"")",1999,usd`);
    // Without a session the export is not given out.
    const anonymous = await fetch(`${publicUrl}/ops/products/export.csv`, { redirect: "manual" });
    expect(anonymous.status).toBe(303);
  });
});
