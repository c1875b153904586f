import { createLogger } from "../../src/logger";
import { withStockHolds } from "../../src/inventory/holding-inventory";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import { createStockHolds } from "../../src/inventory/stock-holds";
import type { InventoryRepository } from "../../src/inventory/inventory";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * The reservation that may come back partial (PARTIAL_FULFILMENT=ship_available), on the real
 * schema: each line takes what is on hand, the order lines record what is missing in the same
 * statement, the ledger moves only what was taken, and every repeat (the repository's, or the
 * workflow's inventory that converts holds first) answers the same without taking stock again.
 */
describe("a reservation that may come back partial", () => {
  let database: TestDatabase;
  let inventory: InventoryRepository;
  let holding: InventoryRepository;

  beforeAll(async () => {
    database = await createTestDatabase();
    inventory = createPrismaInventoryRepository(database.db);
    holding = withStockHolds(inventory, {
      holds: createStockHolds(database.db),
      alerts: { notify: async () => undefined, runFailed: async () => undefined },
      logger: createLogger({ level: "silent" }),
    });
  });
  afterAll(() => database.drop());

  async function createProduct(sku: string, stockOnHand: number, unitPrice = 1000): Promise<void> {
    await database.db.product.create({
      data: {
        sku,
        name: sku,
        unitPrice,
        currency: "usd",
        stockOnHand,
        movements: {
          create: { delta: stockOnHand, reason: "received", actor: "test", stockAfter: stockOnHand },
        },
      },
    });
  }

  async function createOrder(lines: { sku: string; quantity: number; unitPrice: number }[]): Promise<string> {
    const order = await database.db.order.create({
      data: {
        customerId: "cus_partial",
        email: "buyer@example.com",
        currency: "usd",
        total: lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0),
        lines: { create: lines.map((line) => ({ ...line, name: line.sku })) },
      },
    });
    return order.id;
  }

  const stockOf = async (sku: string) =>
    (await database.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;
  const shortOf = async (orderId: string) =>
    (await database.db.orderLine.findMany({ where: { orderId }, orderBy: { sku: "asc" } })).map(
      ({ sku, shortQuantity }) => ({ sku, shortQuantity }),
    );

  it("takes what is on hand of each line, records the rest on its order line, and answers the same when repeated", async () => {
    await createProduct("PR-FULL", 4, 2500);
    await createProduct("PR-SOME", 1, 1000);
    await createProduct("PR-NONE", 0, 700);
    const orderId = await createOrder([
      { sku: "PR-FULL", quantity: 2, unitPrice: 2500 },
      { sku: "PR-SOME", quantity: 3, unitPrice: 1000 },
      { sku: "PR-NONE", quantity: 1, unitPrice: 700 },
    ]);
    const lines = [
      { sku: "PR-SOME", quantity: 3 },
      { sku: "PR-FULL", quantity: 2 },
      { sku: "PR-NONE", quantity: 1 },
    ];

    const first = await inventory.reserve(orderId, lines, undefined, { allowShort: true });

    const expected = {
      ok: true,
      reserved: [
        { sku: "PR-FULL", quantity: 2 },
        { sku: "PR-SOME", quantity: 1 },
      ],
      short: [
        { sku: "PR-NONE", requested: 1, short: 1, amount: 700 },
        { sku: "PR-SOME", requested: 3, short: 2, amount: 2000 },
      ],
    };
    expect(first).toEqual(expected);
    expect(await stockOf("PR-FULL")).toBe(2);
    expect(await stockOf("PR-SOME")).toBe(0);
    expect(await stockOf("PR-NONE")).toBe(0);
    expect(await shortOf(orderId)).toEqual([
      { sku: "PR-FULL", shortQuantity: 0 },
      { sku: "PR-NONE", shortQuantity: 1 },
      { sku: "PR-SOME", shortQuantity: 2 },
    ]);
    const movements = await database.db.stockMovement.findMany({
      where: { orderId },
      orderBy: { sku: "asc" },
    });
    expect(movements.map(({ sku, delta, reason }) => ({ sku, delta, reason }))).toEqual([
      { sku: "PR-FULL", delta: -2, reason: "reserved" },
      { sku: "PR-SOME", delta: -1, reason: "reserved" },
    ]);

    // Repeated (a retried step), and through the workflow's inventory (no hold to convert): the
    // same answer, nothing more taken, whatever the shelf holds now.
    await database.db.product.update({ where: { sku: "PR-NONE" }, data: { stockOnHand: 5 } });
    expect(await inventory.reserve(orderId, lines, undefined, { allowShort: true })).toEqual(expected);
    expect(await holding.reserve(orderId, lines, undefined, { allowShort: true })).toEqual(expected);
    expect(await stockOf("PR-FULL")).toBe(2);
    expect(await database.db.stockMovement.count({ where: { orderId } })).toBe(2);

    // Released: exactly what was reserved comes back.
    expect(await holding.release(orderId)).toEqual([
      { sku: "PR-FULL", quantity: 2 },
      { sku: "PR-SOME", quantity: 1 },
    ]);
    expect(await stockOf("PR-FULL")).toBe(4);
    expect(await stockOf("PR-SOME")).toBe(1);
  });

  it("takes part of a line when every line has something on hand: what each line took, and the part missing", async () => {
    await createProduct("PR-PART-A", 5, 2500);
    await createProduct("PR-PART-B", 1, 400);
    const orderId = await createOrder([
      { sku: "PR-PART-A", quantity: 2, unitPrice: 2500 },
      { sku: "PR-PART-B", quantity: 3, unitPrice: 400 },
    ]);

    const outcome = await inventory.reserve(
      orderId,
      [
        { sku: "PR-PART-B", quantity: 3 },
        { sku: "PR-PART-A", quantity: 2 },
      ],
      undefined,
      { allowShort: true },
    );

    expect(outcome).toEqual({
      ok: true,
      reserved: [
        { sku: "PR-PART-A", quantity: 2 },
        { sku: "PR-PART-B", quantity: 1 },
      ],
      short: [{ sku: "PR-PART-B", requested: 3, short: 2, amount: 800 }],
    });
    expect([await stockOf("PR-PART-A"), await stockOf("PR-PART-B")]).toEqual([3, 0]);
    expect(await shortOf(orderId)).toEqual([
      { sku: "PR-PART-A", shortQuantity: 0 },
      { sku: "PR-PART-B", shortQuantity: 2 },
    ]);
  });

  it("reserves whole, with no short lines, when allowShort finds every line on hand", async () => {
    await createProduct("PR-ENOUGH-A", 3);
    await createProduct("PR-ENOUGH-B", 3);
    const orderId = await createOrder([
      { sku: "PR-ENOUGH-A", quantity: 1, unitPrice: 1000 },
      { sku: "PR-ENOUGH-B", quantity: 3, unitPrice: 1000 },
    ]);

    const outcome = await inventory.reserve(
      orderId,
      [
        { sku: "PR-ENOUGH-B", quantity: 3 },
        { sku: "PR-ENOUGH-A", quantity: 1 },
      ],
      undefined,
      { allowShort: true },
    );

    // toStrictEqual: a whole reservation has no `short` key at all (the workflow reads its
    // presence as a partial order), not an empty list.
    expect(outcome).toStrictEqual({
      ok: true,
      reserved: [
        { sku: "PR-ENOUGH-A", quantity: 1 },
        { sku: "PR-ENOUGH-B", quantity: 3 },
      ],
    });
    expect([await stockOf("PR-ENOUGH-A"), await stockOf("PR-ENOUGH-B")]).toEqual([2, 0]);
  });

  it("is out of stock, taking and recording nothing, when no line has anything on hand", async () => {
    await createProduct("PR-EMPTY-1", 0);
    await createProduct("PR-EMPTY-2", 0);
    const orderId = await createOrder([
      { sku: "PR-EMPTY-1", quantity: 1, unitPrice: 1000 },
      { sku: "PR-EMPTY-2", quantity: 2, unitPrice: 1000 },
    ]);

    const outcome = await inventory.reserve(
      orderId,
      [
        { sku: "PR-EMPTY-1", quantity: 1 },
        { sku: "PR-EMPTY-2", quantity: 2 },
      ],
      undefined,
      { allowShort: true },
    );

    expect(outcome).toMatchObject({ ok: false, reason: "out_of_stock", sku: "PR-EMPTY-1" });
    expect(await shortOf(orderId)).toEqual([
      { sku: "PR-EMPTY-1", shortQuantity: 0 },
      { sku: "PR-EMPTY-2", shortQuantity: 0 },
    ]);
    expect(await database.db.stockReservation.count({ where: { orderId } })).toBe(0);
  });

  it("without allowShort stays all or nothing: one short line takes nothing and records nothing", async () => {
    await createProduct("PR-WHOLE-A", 5);
    await createProduct("PR-WHOLE-B", 0);
    const orderId = await createOrder([
      { sku: "PR-WHOLE-A", quantity: 1, unitPrice: 1000 },
      { sku: "PR-WHOLE-B", quantity: 1, unitPrice: 1000 },
    ]);

    const outcome = await inventory.reserve(orderId, [
      { sku: "PR-WHOLE-A", quantity: 1 },
      { sku: "PR-WHOLE-B", quantity: 1 },
    ]);

    expect(outcome).toEqual({
      ok: false,
      reason: "out_of_stock",
      sku: "PR-WHOLE-B",
      requested: 1,
      available: 0,
    });
    expect(await stockOf("PR-WHOLE-A")).toBe(5);
    expect(await database.db.orderLine.count({ where: { orderId, shortQuantity: { gt: 0 } } })).toBe(0);
  });
});
