import { createServer } from "node:http";
import type { OpsNotice } from "../../src/alerts";
import { buildApp } from "../../src/app";
import { createDatabaseReadiness } from "../../src/health/readiness";
import { createCatalog } from "../../src/inventory/catalog";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import { catalogAdminRoutes } from "../../src/inventory/catalog-routes";
import { createLowStockWatch, type LowStockWatch } from "../../src/inventory/low-stock";
import {
  createStockLedger,
  reportLedgerMismatches,
  type StockLedger,
} from "../../src/inventory/stock-ledger";
import { createLogger } from "../../src/logger";
import { createCheckoutRepository } from "../../src/orders/checkout/checkout-repository";
import { listenOnLoopback } from "../support/loopback-server";
import { IntakeHarness } from "../orders/intake-harness";
import { createResponseChecker } from "../support/openapi";

// The answers are held to openapi.json by the contract checker; the assertions read them loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above
type JsonAnswer = Record<string, any>;

const adminToken = "catalog-admin-token-0123456789";
const contract = createResponseChecker();

describe("the catalog through the admin API, and the stock ledger", () => {
  let h: IntakeHarness;
  let admin: { url: string; close(): Promise<void> };
  let ledger: StockLedger;
  let lowStock: LowStockWatch;
  const alerts: OpsNotice[] = [];

  beforeAll(async () => {
    h = await IntakeHarness.start();
    ledger = createStockLedger(h.db);
    lowStock = createLowStockWatch(h.db, {
      alerts: { notify: async (notice) => void alerts.push(notice), runFailed: async () => undefined },
    });
    const app = buildApp({
      logger: createLogger({ level: "silent" }),
      readiness: await createDatabaseReadiness(h.db),
      catalogAdmin: catalogAdminRoutes({ adminToken, catalog: createCatalog(h.db, { ledger, lowStock }) }),
    });
    admin = await listenOnLoopback(createServer(app));
  });
  afterAll(async () => {
    await admin.close();
    await h.close();
  });

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${admin.url}/api/admin/products${path}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const answer = {
      status: res.status,
      etag: res.headers.get("etag"),
      body: (await res.json()) as JsonAnswer,
    };
    // Every answer of this suite is held to the published contract.
    contract.check(method, `/api/admin/products${path}`, answer.status, answer.body);
    return answer;
  };
  const ledgerSum = async (sku: string) =>
    (await h.db.stockMovement.aggregate({ where: { sku }, _sum: { delta: true } }))._sum.delta ?? 0;
  const stockOf = async (sku: string) =>
    (await h.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;

  it("refuses a request without the admin token", async () => {
    const res = await fetch(`${admin.url}/api/admin/products`);
    expect(res.status).toBe(401);
  });

  it("creates a product that is on sale at once, with its opening stock as the ledger's first row", async () => {
    const created = await call("POST", "", {
      sku: "LAMP-1",
      name: "Desk lamp",
      unitPrice: 4200,
      currency: "USD",
      weightOz: 40,
      lengthIn: 12,
      widthIn: 6,
      heightIn: 6,
      stockOnHand: 12,
    });
    expect(created.status).toBe(201);
    expect(created.etag).toBe('"1"');
    expect(created.body).toMatchObject({
      sku: "LAMP-1",
      currency: "usd",
      stockOnHand: 12,
      weightOz: 40,
      version: 1,
    });

    const listed = (await (await fetch(`${h.url}/api/products`)).json()) as { products: { sku: string }[] };
    contract.check("GET", "/api/products", 200, listed);
    expect(listed.products).toContainEqual({
      sku: "LAMP-1",
      name: "Desk lamp",
      unitPrice: 4200,
      currency: "usd",
      quantityAvailable: 12,
    });
    const { orderId } = await h.checkout([{ sku: "LAMP-1", quantity: 2 }]);
    expect((await h.order(orderId)).total).toBe(8400);

    const page = await call("GET", "/LAMP-1/stock");
    expect(page.status).toBe(200);
    expect(page.body.movements.map((m: { reason: string; delta: number }) => [m.reason, m.delta])).toEqual([
      ["reserved", -2],
      ["received", 12],
    ]);
    expect(page.body.movements[0]).toMatchObject({ actor: "checkout", orderId, stockAfter: 10 });
    expect(await ledgerSum("LAMP-1")).toBe(await stockOf("LAMP-1"));
  });

  it("marks a product to ship alone, and unmarks it, through the API", async () => {
    const created = await call("POST", "", {
      sku: "BIKE-1",
      name: "Bicycle",
      unitPrice: 30000,
      currency: "usd",
      shipsAlone: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sku: "BIKE-1", shipsAlone: true });
    const edited = await call("PATCH", "/BIKE-1", { shipsAlone: false, version: 1 });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ shipsAlone: false, version: 2 });
    expect((await h.db.product.findUniqueOrThrow({ where: { sku: "BIKE-1" } })).shipsAlone).toBe(false);
    const refused = await call("PATCH", "/BIKE-1", { shipsAlone: "yes" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("validation_failed");
  });

  it("refuses bad input with the field named, and changes nothing", async () => {
    const bad = await call("POST", "", {
      sku: "BAD 1",
      name: "",
      unitPrice: -1,
      currency: "dollars",
      colour: "red",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
    expect(bad.body.error.details.fields).toEqual(
      expect.arrayContaining(["sku", "name", "unitPrice", "currency"]),
    );
    expect(bad.body.error.message).toMatch(/colour/);
    expect(await h.db.product.count({ where: { sku: "BAD 1" } })).toBe(0);

    const duplicate = await call("POST", "", { sku: "LAMP-1", name: "Again", unitPrice: 1, currency: "usd" });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe("product_exists");

    const badPatch = await call("PATCH", "/LAMP-1", { weightOz: -3 });
    expect(badPatch.status).toBe(400);
    expect(badPatch.body.error.details.fields).toEqual(["weightOz"]);
    expect(await call("PATCH", "/NOPE-9", { name: "x" })).toMatchObject({ status: 404 });
  });

  it("refuses a stale edit with 409, and a price change leaves placed orders as they were", async () => {
    await call("POST", "", { sku: "VASE-1", name: "Vase", unitPrice: 3000, currency: "usd", stockOnHand: 5 });
    const { orderId } = await h.checkout([{ sku: "VASE-1", quantity: 1 }]);

    const first = await call("PATCH", "/VASE-1", { unitPrice: 3500 }, { "if-match": '"1"' });
    expect(first.status).toBe(200);
    expect(first.etag).toBe('"2"');
    const stale = await call("PATCH", "/VASE-1", { unitPrice: 9999 }, { "if-match": '"1"' });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: "version_conflict", details: { version: 2 } });
    const staleByBody = await call("PATCH", "/VASE-1", { unitPrice: 9999, version: 1 });
    expect(staleByBody.status).toBe(409);

    expect((await call("GET", "/VASE-1")).body.unitPrice).toBe(3500);
    const order = await h.order(orderId);
    expect(order.total).toBe(3000);
    expect(order.lines.map((line) => line.unitPrice)).toEqual([3000]);
  });

  it("archives a product: off the public list, refused at checkout, placed orders unaffected", async () => {
    await call("POST", "", {
      sku: "OLD-1",
      name: "Old print",
      unitPrice: 800,
      currency: "usd",
      stockOnHand: 4,
    });
    const { orderId } = await h.checkout([{ sku: "OLD-1", quantity: 1 }]);
    expect((await call("PATCH", "/OLD-1", { archived: true })).body.archived).toBe(true);

    const listed = (await (await fetch(`${h.url}/api/products`)).json()) as { products: { sku: string }[] };
    expect(listed.products.map((p) => p.sku)).not.toContain("OLD-1");
    const refused = await fetch(`${h.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "c-old",
        email: "a@example.com",
        items: [{ sku: "OLD-1", quantity: 1 }],
      }),
    });
    expect(refused.status).toBe(409);
    const refusal = (await refused.json()) as { error: { code: string } };
    contract.check("POST", "/api/checkout", 409, refusal);
    expect(refusal.error.code).toBe("product_unavailable");
    expect((await h.order(orderId)).lines).toHaveLength(1);
    expect((await call("GET", "")).body.products.map((p: { sku: string }) => p.sku)).not.toContain("OLD-1");
    expect(
      (await call("GET", "?archived=include")).body.products.map((p: { sku: string }) => p.sku),
    ).toContain("OLD-1");
  });

  it("receives, adjusts, counts and writes off stock, each a ledger row, never below zero", async () => {
    await call("POST", "", { sku: "CUP-1", name: "Cup", unitPrice: 900, currency: "usd" });
    expect(
      (await call("POST", "/CUP-1/stock", { delta: 30, reason: "received", note: "PO 17" })).status,
    ).toBe(201);
    expect((await call("POST", "/CUP-1/stock", { delta: -2, reason: "adjusted" })).body).toMatchObject({
      delta: -2,
      stockAfter: 28,
      actor: "admin-api",
    });
    expect((await call("POST", "/CUP-1/stock", { count: 25, reason: "counted" })).body).toMatchObject({
      delta: -3,
      stockAfter: 25,
    });
    expect(
      (await call("POST", "/CUP-1/stock", { delta: -1, reason: "written-off", note: "broken" })).status,
    ).toBe(201);

    const below = await call("POST", "/CUP-1/stock", { delta: -100, reason: "adjusted" });
    expect(below.status).toBe(409);
    expect(below.body.error.code).toBe("insufficient_stock");
    for (const bad of [
      { delta: 0, reason: "adjusted" },
      { delta: 5, count: 5, reason: "counted" },
      { count: 5, reason: "received" },
      { delta: -5, reason: "received" },
      { delta: 5, reason: "reserved" },
    ]) {
      const refused = await call("POST", "/CUP-1/stock", bad);
      expect([refused.status, refused.body.error.code]).toEqual([400, "validation_failed"]);
    }
    expect(await stockOf("CUP-1")).toBe(24);
    expect(await ledgerSum("CUP-1")).toBe(24);

    const first = await call("GET", "/CUP-1/stock?limit=2");
    expect(first.body.movements.map((m: { reason: string }) => m.reason)).toEqual(["written-off", "counted"]);
    const second = await call("GET", `/CUP-1/stock?limit=2&before=${first.body.nextCursor}`);
    expect(second.body.movements.map((m: { reason: string }) => m.reason)).toEqual(["adjusted", "received"]);
    expect(second.body.nextCursor).toBeNull();
    expect((await call("GET", "/CUP-1/stock?limit=abc")).status).toBe(400);
  });

  it("writes the ledger row of every release and reservation the workflow and checkout make", async () => {
    await call("POST", "", {
      sku: "FLOW-1",
      name: "Flow item",
      unitPrice: 100,
      currency: "usd",
      stockOnHand: 20,
    });
    const checkouts = createCheckoutRepository(h.db);
    const inventory = createPrismaInventoryRepository(h.db);
    const { orderId: abandoned } = await h.checkout([{ sku: "FLOW-1", quantity: 3 }], "flow-a");
    await checkouts.abandon(abandoned, "payment failed");
    const { orderId: unheld } = await h.checkout([{ sku: "FLOW-1", quantity: 4 }], "flow-b");
    await checkouts.abandon(unheld, "expired");
    // An order without a hold (its hold was lost): the run takes stock afresh, then gives it back.
    expect(await inventory.reserve(unheld, [{ sku: "FLOW-1", quantity: 4 }])).toMatchObject({ ok: true });
    expect(await inventory.release(unheld)).toEqual([{ sku: "FLOW-1", quantity: 4 }]);
    expect(await inventory.release(unheld)).toEqual([]);

    const rows = await h.db.stockMovement.findMany({ where: { sku: "FLOW-1" }, orderBy: { id: "asc" } });
    expect(rows.map((m) => [m.reason, m.delta, m.actor, m.orderId])).toEqual([
      ["received", 20, "admin-api", null],
      ["reserved", -3, "checkout", abandoned],
      ["released", 3, "checkout", abandoned],
      ["reserved", -4, "checkout", unheld],
      ["released", 4, "checkout", unheld],
      ["reserved", -4, "fulfilment", unheld],
      ["released", 4, "fulfilment", unheld],
    ]);
    expect(rows[2]?.note).toBe("payment failed");
    expect(await stockOf("FLOW-1")).toBe(20);
    expect(await ledgerSum("FLOW-1")).toBe(20);
  });

  it("keeps stock on hand equal to the ledger after 200 concurrent checkouts with a count in the middle", async () => {
    await call("POST", "", {
      sku: "RUSH-1",
      name: "Rush item",
      unitPrice: 100,
      currency: "usd",
      stockOnHand: 150,
    });
    const checkouts = createCheckoutRepository(h.db);
    let settled = 0;
    let countTaken: Promise<unknown> | undefined;
    const attempts = Array.from({ length: 200 }, (_, i) =>
      checkouts
        .createPendingOrder({
          customerId: `rush-${i}`,
          email: "rush@example.com",
          currency: "usd",
          lines: [{ sku: "RUSH-1", name: "Rush item", unitPrice: 100, quantity: 1 }],
          idempotencyKey: null,
          requestHash: `rush-${i}`,
          expiresAt: new Date(Date.now() + 3_600_000),
        })
        .then(
          () => "held" as const,
          () => "short" as const,
        )
        .finally(() => {
          settled += 1;
          // The count, taken while the rest of the checkouts still queue on the row lock.
          if (settled === 60) countTaken = call("POST", "/RUSH-1/stock", { count: 100, reason: "counted" });
        }),
    );
    const outcomes = await Promise.all(attempts);
    await countTaken;

    const held = outcomes.filter((o) => o === "held").length;
    const holds = await h.db.stockHold.aggregate({ where: { sku: "RUSH-1" }, _sum: { quantity: true } });
    expect(holds._sum.quantity).toBe(held);
    expect(await ledgerSum("RUSH-1")).toBe(await stockOf("RUSH-1"));
    const reserved = await h.db.stockMovement.count({ where: { sku: "RUSH-1", reason: "reserved" } });
    expect(reserved).toBe(held);
    const count = await h.db.stockMovement.findFirstOrThrow({ where: { sku: "RUSH-1", reason: "counted" } });
    const after = await h.db.stockMovement.count({
      where: { sku: "RUSH-1", reason: "reserved", id: { gt: count.id } },
    });
    // Every hold after the count came out of the counted units: none was lost or counted twice.
    expect(await stockOf("RUSH-1")).toBe(100 - after);
    expect((await ledger.mismatches()).filter((m) => m.sku.startsWith("RUSH"))).toEqual([]);
  });

  it("alerts once when stock falls to the threshold, not again while low, and again after it recovered", async () => {
    await call("POST", "", {
      sku: "LOW-1",
      name: "Low item",
      unitPrice: 100,
      currency: "usd",
      stockOnHand: 10,
      lowStockThreshold: 5,
    });
    const lowAlerts = () => alerts.filter((a) => a.fields.sku === "LOW-1");
    expect(lowAlerts()).toHaveLength(0);

    await h.checkout([{ sku: "LOW-1", quantity: 5 }], "low-a");
    await lowStock.check();
    expect(lowAlerts()).toHaveLength(1);
    expect(lowAlerts()[0]).toMatchObject({
      title: "Low stock: Low item",
      fields: { stockOnHand: 5, threshold: 5 },
    });

    await h.checkout([{ sku: "LOW-1", quantity: 2 }], "low-b");
    await Promise.all([lowStock.check(), lowStock.check()]);
    expect((await call("GET", "?low=true")).body.products.map((p: { sku: string }) => p.sku)).toEqual([
      "LOW-1",
    ]);
    expect(lowAlerts()).toHaveLength(1);

    await call("POST", "/LOW-1/stock", { delta: 10, reason: "received" });
    expect(lowAlerts()).toHaveLength(1);
    await call("POST", "/LOW-1/stock", { delta: -9, reason: "adjusted" });
    expect(lowAlerts()).toHaveLength(2);
  });

  it("the daily ledger check tells ops about stock changed without its movement, and only that", async () => {
    const notices: OpsNotice[] = [];
    const notify = async (notice: OpsNotice) => void notices.push(notice);
    const before = (await reportLedgerMismatches(ledger, { notify })).map((m) => m.sku);
    // The harness's catalog was inserted without ledger rows: exactly the case the check is for.
    expect(before).toEqual(["EURO-BAG", "MUG", "POSTER", "TEE"]);
    await h.db.$executeRaw`UPDATE products SET stock_on_hand = stock_on_hand + 5 WHERE sku = 'CUP-1'`;
    const after = await reportLedgerMismatches(ledger, { notify });
    expect(after).toContainEqual({ sku: "CUP-1", stockOnHand: 29, ledgerSum: 24 });
    expect(notices.at(-1)?.fields.products).toContain("CUP-1: 29 on hand, ledger 24");
    // A count records the difference to what is on hand, so it does not hide the change made by hand.
    await call("POST", "/CUP-1/stock", { count: 24, reason: "counted", note: "recount after the check" });
    expect(await reportLedgerMismatches(ledger, { notify })).toContainEqual({
      sku: "CUP-1",
      stockOnHand: 24,
      ledgerSum: 19,
    });
  });

  describe("catalog rules", () => {
    it("refuses a price of 0 (Stripe cannot capture it) and a price in major units, naming minor units (cents)", async () => {
      const free = await call("POST", "", { sku: "FREE-1", name: "Free", unitPrice: 0, currency: "usd" });
      expect(free.status).toBe(400);
      expect(free.body.error.details.fields).toEqual(["unitPrice"]);
      expect(free.body.error.message).toMatch(/minor unit \(cent\)/);

      const decimal = await call("POST", "", { sku: "DEC-1", name: "Dec", unitPrice: 12.5, currency: "usd" });
      expect(decimal.status).toBe(400);
      expect(decimal.body.error.message).toMatch(/whole number of minor units \(cents\)/);
      expect(decimal.body.error.message).toMatch(/did you mean 1250/);

      const text = await call("POST", "", { sku: "DEC-2", name: "Dec", unitPrice: "12.50", currency: "usd" });
      expect(text.status).toBe(400);
      expect(text.body.error.message).toMatch(/minor units \(cents\)/);
      expect(await h.db.product.count({ where: { sku: { in: ["FREE-1", "DEC-1", "DEC-2"] } } })).toBe(0);

      await call("POST", "", { sku: "PRICED-1", name: "Priced", unitPrice: 100, currency: "usd" });
      const zeroEdit = await call("PATCH", "/PRICED-1", { unitPrice: 0 });
      expect(zeroEdit.status).toBe(400);
      expect((await call("GET", "/PRICED-1")).body.unitPrice).toBe(100);
    });

    it("takes only currencies Stripe charges in: not xxx, not a made-up code", async () => {
      for (const currency of ["xxx", "abc", "XTS"]) {
        const bad = await call("POST", "", { sku: "CUR-1", name: "Cur", unitPrice: 100, currency });
        expect(bad.status).toBe(400);
        expect(bad.body.error.details.fields).toEqual(["currency"]);
        expect(bad.body.error.message).toMatch(/not a currency Stripe charges in/);
      }
      expect(await h.db.product.count({ where: { sku: "CUR-1" } })).toBe(0);
      const yen = await call("POST", "", { sku: "CUR-JPY", name: "Yen", unitPrice: 1250, currency: "JPY" });
      expect(yen.status).toBe(201);
      expect(yen.body.currency).toBe("jpy");
    });

    it("treats SKUs differing only in case as one SKU", async () => {
      expect(
        (await call("POST", "", { sku: "CASE-1", name: "Case", unitPrice: 100, currency: "usd" })).status,
      ).toBe(201);
      const twin = await call("POST", "", { sku: "case-1", name: "Twin", unitPrice: 100, currency: "usd" });
      expect(twin.status).toBe(409);
      expect(twin.body.error.code).toBe("product_exists");
      expect(twin.body.error.message).toMatch(/CASE-1 already exists/);
      expect(await h.db.product.count({ where: { sku: { equals: "case-1", mode: "insensitive" } } })).toBe(1);
    });

    it("refuses a currency change on a product already ordered, allows it before the first order", async () => {
      await call("POST", "", {
        sku: "CURCHG-1",
        name: "Unsold",
        unitPrice: 100,
        currency: "usd",
        stockOnHand: 5,
      });
      const unsold = await call("PATCH", "/CURCHG-1", { currency: "eur" });
      expect(unsold.status).toBe(200);
      expect(unsold.body.currency).toBe("eur");

      await call("POST", "", {
        sku: "CURCHG-2",
        name: "Sold",
        unitPrice: 100,
        currency: "usd",
        stockOnHand: 5,
      });
      await h.checkout([{ sku: "CURCHG-2", quantity: 1 }]);
      const sold = await call("PATCH", "/CURCHG-2", { currency: "eur", name: "Renamed" });
      expect(sold.status).toBe(409);
      expect(sold.body.error.code).toBe("currency_locked");
      expect(sold.body.error.message).toMatch(/ordered in usd/);
      const after = await call("GET", "/CURCHG-2");
      expect(after.body).toMatchObject({ currency: "usd", name: "Sold" });
      // The same currency, written differently, is no change.
      expect((await call("PATCH", "/CURCHG-2", { currency: "USD" })).status).toBe(200);
    });
  });
});
