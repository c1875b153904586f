import { createDatabase, sqlPool } from "../../src/db/client";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import type { InventoryRepository } from "../../src/inventory/inventory";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { eventually } from "../support/eventually";

describe("stock reservations", () => {
  let database: TestDatabase;
  let inventory: InventoryRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    inventory = createPrismaInventoryRepository(database.db);
  });
  afterAll(() => database.drop());

  async function createProduct(sku: string, stockOnHand: number): Promise<void> {
    await database.db.product.create({
      data: { sku, name: sku, unitPrice: 1000, currency: "usd", stockOnHand },
    });
  }

  async function createOrder(): Promise<string> {
    const order = await database.db.order.create({
      data: { customerId: "cus_test", email: "buyer@example.com", currency: "usd", total: 1000 },
    });
    return order.id;
  }

  async function stockOf(sku: string): Promise<number> {
    const product = await database.db.product.findUniqueOrThrow({ where: { sku } });
    return product.stockOnHand;
  }

  it("lets exactly the available quantity through when 60 orders race for 17 units", async () => {
    await createProduct("RACE-1", 17);
    const orderIds = await Promise.all(Array.from({ length: 60 }, () => createOrder()));

    const outcomes = await Promise.all(
      orderIds.map((id) => inventory.reserve(id, [{ sku: "RACE-1", quantity: 1 }])),
    );

    expect(outcomes.filter((o) => o.ok)).toHaveLength(17);
    expect(outcomes.filter((o) => !o.ok)).toHaveLength(43);
    expect(await stockOf("RACE-1")).toBe(0);
    expect(await database.db.stockReservation.count({ where: { sku: "RACE-1" } })).toBe(17);
  });

  it("a reservation queued behind a busy connection pool still succeeds (no interactive transaction with Prisma's 2 s start limit)", async () => {
    await createProduct("QUEUED-1", 3);
    const orderIds = await Promise.all(Array.from({ length: 4 }, () => createOrder()));
    // One connection, held by a statement waiting for a lock the test holds and releases.
    const narrow = createDatabase(database.url, { maxConnections: 1 });
    const holder = await sqlPool(database.db).connect();
    const lockKey = 7_250_001;
    await holder.query("SELECT pg_advisory_lock($1)", [lockKey]);
    try {
      const narrowInventory = createPrismaInventoryRepository(narrow);
      // Prisma's promises are lazy: then() sends the query; wait until the server has it waiting.
      const busy = new Promise((resolve, reject) => {
        narrow.$executeRaw`SELECT pg_advisory_xact_lock(${lockKey}) /* hold-the-pool */`.then(
          resolve,
          reject,
        );
      });
      await eventually("the narrow pool's one connection waits for the lock", async () => {
        const [{ waiting } = { waiting: 0 }] = await database.db.$queryRaw<{ waiting: number }[]>`
          SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE wait_event_type = 'Lock' AND query LIKE '%hold-the-pool%' AND query NOT LIKE '%pg_stat_activity%'`;
        return waiting > 0;
      });
      const reserving = Promise.all(
        orderIds.map((id) => narrowInventory.reserve(id, [{ sku: "QUEUED-1", quantity: 1 }])),
      );
      await eventually("all four reservations queue for the pool", () => sqlPool(narrow).waitingCount === 4);
      // Held past Prisma's 2 s limit for starting an interactive transaction: a lower bound the
      // scenario needs (a longer hold changes nothing), not a guess at when something happens.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await holder.query("SELECT pg_advisory_unlock($1)", [lockKey]);
      const outcomes = await reserving;
      await busy;

      expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
      expect(outcomes.filter((o) => !o.ok)).toEqual([
        { ok: false, reason: "out_of_stock", sku: "QUEUED-1", requested: 1, available: 0 },
      ]);
      expect(await stockOf("QUEUED-1")).toBe(0);
      expect(await narrowInventory.release(orderIds[0] ?? "")).toEqual([{ sku: "QUEUED-1", quantity: 1 }]);
    } finally {
      await holder.query("SELECT pg_advisory_unlock_all()");
      holder.release();
      await narrow.$disconnect();
    }
  });

  it("reserves all lines of an order or none", async () => {
    await createProduct("PAIR-A", 5);
    await createProduct("PAIR-B", 1);
    const orderId = await createOrder();

    const outcome = await inventory.reserve(orderId, [
      { sku: "PAIR-A", quantity: 2 },
      { sku: "PAIR-B", quantity: 3 },
    ]);

    expect(outcome).toEqual({ ok: false, reason: "out_of_stock", sku: "PAIR-B", requested: 3, available: 1 });
    expect(await stockOf("PAIR-A")).toBe(5);
    expect(await database.db.stockReservation.count({ where: { orderId } })).toBe(0);
  });

  it("takes stock once however often the same order reserves", async () => {
    await createProduct("REPEAT-1", 10);
    const orderId = await createOrder();
    const lines = [{ sku: "REPEAT-1", quantity: 4 }];

    const results = await Promise.all([inventory.reserve(orderId, lines), inventory.reserve(orderId, lines)]);
    const again = await inventory.reserve(orderId, lines);

    expect(results.every((r) => r.ok)).toBe(true);
    expect(again).toEqual({ ok: true, reserved: lines });
    expect(await stockOf("REPEAT-1")).toBe(6);
  });

  it("returns stock once however often the order is released", async () => {
    await createProduct("RELEASE-1", 10);
    const orderId = await createOrder();
    await inventory.reserve(orderId, [{ sku: "RELEASE-1", quantity: 3 }]);

    const [first, second] = await Promise.all([inventory.release(orderId), inventory.release(orderId)]);
    const third = await inventory.release(orderId);

    expect([...first, ...second]).toEqual([{ sku: "RELEASE-1", quantity: 3 }]);
    expect(third).toEqual([]);
    expect(await stockOf("RELEASE-1")).toBe(10);
  });

  it("refuses negative stock in the database itself", async () => {
    await createProduct("GUARD-1", 1);
    await expect(
      database.db.product.update({ where: { sku: "GUARD-1" }, data: { stockOnHand: { decrement: 2 } } }),
    ).rejects.toThrow(/products_stock_on_hand_non_negative/);
  });
});
