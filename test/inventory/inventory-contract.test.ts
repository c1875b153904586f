import { Client } from "pg";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import type { InventoryRepository } from "../../src/inventory/inventory";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { eventually } from "../support/eventually";

// Mutation testing (docs/mutation-testing.md, group `inventory`): the answers of the
// InventoryRepository contract that the first mutation pass showed no test pinned down. Asserted at
// the contract (what reserve/release/list answer, what stock is left), not at how the SQL gets there.

describe("inventory repository contract", () => {
  let database: TestDatabase;
  let inventory: InventoryRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    inventory = createPrismaInventoryRepository(database.db);
  });
  afterAll(() => database.drop());

  async function createProduct(sku: string, stockOnHand: number, extra: { digital?: boolean } = {}) {
    await database.db.product.create({
      data: { sku, name: `Product ${sku}`, unitPrice: 1250, currency: "eur", stockOnHand, ...extra },
    });
  }

  async function createOrder(): Promise<string> {
    const order = await database.db.order.create({
      data: { customerId: "cus_contract", email: "buyer@example.com", currency: "eur", total: 1000 },
    });
    return order.id;
  }

  /** Sessions of this database waiting for a lock (asked on the pool, outside any transaction). */
  const lockWaiters = async () =>
    (
      await database.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'`
    )[0]?.n ?? 0;
  const stockOf = async (sku: string) =>
    (await database.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;

  it("lists every product by SKU with what is available, and marks only digital ones digital", async () => {
    await createProduct("LIST-B", 4);
    await createProduct("LIST-A", 0, { digital: true });
    await createProduct("LIST-C", 9, { digital: false });

    const listed = (await inventory.listProducts()).filter((p) => p.sku.startsWith("LIST-"));

    // toStrictEqual: a physical product has no `digital` key at all, not `digital: false`.
    expect(listed).toStrictEqual([
      {
        sku: "LIST-A",
        name: "Product LIST-A",
        unitPrice: 1250,
        currency: "eur",
        quantityAvailable: 0,
        digital: true,
      },
      { sku: "LIST-B", name: "Product LIST-B", unitPrice: 1250, currency: "eur", quantityAvailable: 4 },
      { sku: "LIST-C", name: "Product LIST-C", unitPrice: 1250, currency: "eur", quantityAvailable: 9 },
    ]);
    const skus = (await inventory.listProducts()).map((p) => p.sku);
    expect(skus).toEqual([...skus].sort());
  });

  it("leaves archived products out of the list, and finds one by SKU marked archived", async () => {
    await createProduct("OFF-LIVE", 3);
    await database.db.product.create({
      data: {
        sku: "OFF-ARCHIVED",
        name: "Product OFF-ARCHIVED",
        unitPrice: 1250,
        currency: "eur",
        stockOnHand: 2,
        archivedAt: new Date(),
      },
    });

    expect(
      (await inventory.listProducts()).filter((p) => p.sku.startsWith("OFF-")).map((p) => p.sku),
    ).toEqual(["OFF-LIVE"]);
    // An order already placed may name it: the checkout is refused on the mark, not on a missing row.
    expect(await inventory.findProducts(["OFF-ARCHIVED"])).toStrictEqual([
      {
        sku: "OFF-ARCHIVED",
        name: "Product OFF-ARCHIVED",
        unitPrice: 1250,
        currency: "eur",
        quantityAvailable: 2,
        archived: true,
      },
    ]);
  });

  it("finds just the products asked for, skipping unknown SKUs", async () => {
    await createProduct("FIND-A", 2);
    await createProduct("FIND-B", 3, { digital: true });
    await createProduct("FIND-C", 5);

    const found = await inventory.findProducts(["FIND-B", "FIND-A", "FIND-NONE"]);

    expect([...found].sort((a, b) => a.sku.localeCompare(b.sku))).toStrictEqual([
      { sku: "FIND-A", name: "Product FIND-A", unitPrice: 1250, currency: "eur", quantityAvailable: 2 },
      {
        sku: "FIND-B",
        name: "Product FIND-B",
        unitPrice: 1250,
        currency: "eur",
        quantityAvailable: 3,
        digital: true,
      },
    ]);
    expect(await inventory.findProducts([])).toEqual([]);
  });

  it("reserves every line of an order, answers them by SKU, and takes each line's quantity", async () => {
    await createProduct("MULTI-A", 5);
    await createProduct("MULTI-B", 5);
    await createProduct("MULTI-C", 5);
    const orderId = await createOrder();

    const outcome = await inventory.reserve(orderId, [
      { sku: "MULTI-C", quantity: 3 },
      { sku: "MULTI-A", quantity: 1 },
      { sku: "MULTI-B", quantity: 5 },
    ]);

    expect(outcome).toEqual({
      ok: true,
      reserved: [
        { sku: "MULTI-A", quantity: 1 },
        { sku: "MULTI-B", quantity: 5 },
        { sku: "MULTI-C", quantity: 3 },
      ],
    });
    expect([await stockOf("MULTI-A"), await stockOf("MULTI-B"), await stockOf("MULTI-C")]).toEqual([4, 0, 2]);
    // Released in the same SKU order, each line's own quantity back.
    expect(await inventory.release(orderId)).toEqual([
      { sku: "MULTI-A", quantity: 1 },
      { sku: "MULTI-B", quantity: 5 },
      { sku: "MULTI-C", quantity: 3 },
    ]);
    expect([await stockOf("MULTI-A"), await stockOf("MULTI-B"), await stockOf("MULTI-C")]).toEqual([5, 5, 5]);
  });

  it("a repeated reservation answers what the order holds, not what the retry asked for", async () => {
    await createProduct("AGAIN-A", 10);
    await createProduct("AGAIN-B", 10);
    // Another order's reservation of the same SKU is not this order's.
    await inventory.reserve(await createOrder(), [{ sku: "AGAIN-A", quantity: 3 }]);
    const orderId = await createOrder();
    await inventory.reserve(orderId, [
      { sku: "AGAIN-B", quantity: 2 },
      { sku: "AGAIN-A", quantity: 1 },
    ]);

    const again = await inventory.reserve(orderId, [{ sku: "AGAIN-A", quantity: 7 }]);

    expect(again).toEqual({
      ok: true,
      reserved: [
        { sku: "AGAIN-A", quantity: 1 },
        { sku: "AGAIN-B", quantity: 2 },
      ],
    });
    expect([await stockOf("AGAIN-A"), await stockOf("AGAIN-B")]).toEqual([6, 8]);
  });

  it("two reservations of one order in flight at once take its stock once, and both answer the reservation", async () => {
    await createProduct("TWICE-1", 5);
    const orderId = await createOrder();
    const blocker = new Client({ connectionString: database.url });
    await blocker.connect();
    try {
      // Hold the product row, so that both statements are in flight together (the first at the
      // product, the second at the order row) before either commits.
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM products WHERE sku = 'TWICE-1' FOR UPDATE`);
      const lines = [{ sku: "TWICE-1", quantity: 2 }];
      const both = Promise.all([inventory.reserve(orderId, lines), inventory.reserve(orderId, lines)]);
      await eventually("both reservations wait", async () => (await lockWaiters()) >= 2);
      await blocker.query("COMMIT");
      expect(await both).toEqual([
        { ok: true, reserved: lines },
        { ok: true, reserved: lines },
      ]);
    } finally {
      await blocker.end();
    }
    expect(await stockOf("TWICE-1")).toBe(3);
  });

  it("names the line that is short, even after a line that just fits", async () => {
    await createProduct("SHORT-A", 2);
    await createProduct("SHORT-B", 1);
    const orderId = await createOrder();

    // SHORT-A asks exactly what is there; SHORT-B asks one more than there is.
    const outcome = await inventory.reserve(orderId, [
      { sku: "SHORT-B", quantity: 2 },
      { sku: "SHORT-A", quantity: 2 },
    ]);

    expect(outcome).toEqual({
      ok: false,
      reason: "out_of_stock",
      sku: "SHORT-B",
      requested: 2,
      available: 1,
    });
    expect([await stockOf("SHORT-A"), await stockOf("SHORT-B")]).toEqual([2, 1]);
    // Nothing was reserved, so a later attempt with stock added succeeds.
    await database.db.product.update({ where: { sku: "SHORT-B" }, data: { stockOnHand: 2 } });
    expect(await inventory.reserve(orderId, [{ sku: "SHORT-B", quantity: 2 }])).toEqual({
      ok: true,
      reserved: [{ sku: "SHORT-B", quantity: 2 }],
    });
  });

  it("answers out of stock, with nothing available, for a SKU that does not exist", async () => {
    await createProduct("REAL-1", 5);
    const orderId = await createOrder();

    const outcome = await inventory.reserve(orderId, [
      { sku: "REAL-1", quantity: 1 },
      { sku: "GHOST-1", quantity: 2 },
    ]);

    expect(outcome).toEqual({
      ok: false,
      reason: "out_of_stock",
      sku: "GHOST-1",
      requested: 2,
      available: 0,
    });
    expect(await stockOf("REAL-1")).toBe(5);
    expect(await inventory.release(orderId)).toEqual([]);
  });

  it("fails, taking nothing, to reserve for an order that does not exist", async () => {
    await createProduct("ORPHAN-1", 5);

    await expect(
      inventory.reserve("00000000-0000-4000-8000-0000000000aa", [{ sku: "ORPHAN-1", quantity: 1 }]),
    ).rejects.toThrow();
    expect(await stockOf("ORPHAN-1")).toBe(5);
  });

  it("with a guard, reserves for the claim that owns a fulfilling order, and refuses one whose cancel was requested", async () => {
    const claimId = "7b0c9d2e-4f1a-4c3b-8d5e-6a7b8c9d0e1f";
    await createProduct("OWNED-1", 5);
    const order = await database.db.order.create({
      data: {
        customerId: "cus_contract",
        email: "buyer@example.com",
        currency: "eur",
        total: 1000,
        status: "fulfilling",
        claimId,
      },
    });

    expect(await inventory.reserve(order.id, [{ sku: "OWNED-1", quantity: 2 }], { claimId })).toEqual({
      ok: true,
      reserved: [{ sku: "OWNED-1", quantity: 2 }],
    });
    expect(await stockOf("OWNED-1")).toBe(3);

    const cancelled = await database.db.order.create({
      data: {
        customerId: "cus_contract",
        email: "buyer@example.com",
        currency: "eur",
        total: 1000,
        status: "fulfilling",
        claimId,
        cancelRequestedAt: new Date(),
      },
    });
    expect(await inventory.reserve(cancelled.id, [{ sku: "OWNED-1", quantity: 1 }], { claimId })).toEqual({
      ok: false,
      reason: "cancelled",
    });
    // Not fulfilling (e.g. already cancelled) counts as closed too.
    const refunded = await database.db.order.create({
      data: {
        customerId: "cus_contract",
        email: "buyer@example.com",
        currency: "eur",
        total: 1000,
        status: "cancelled",
        claimId,
      },
    });
    expect(await inventory.reserve(refunded.id, [{ sku: "OWNED-1", quantity: 1 }], { claimId })).toEqual({
      ok: false,
      reason: "cancelled",
    });
    expect(await stockOf("OWNED-1")).toBe(3);
  });
});
