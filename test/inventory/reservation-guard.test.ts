import { Client } from "pg";
import { createDatabase, type Database } from "../../src/db/client";
import { createFulfilmentRecords } from "../../src/orders/fulfilment-records";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { eventually } from "../support/eventually";

/**
 * A cancel landing while reserve-stock is in flight. reserve-stock has no external call to delay: its guard
 * is checked under the order's row lock inside the reservation's own transaction, and the cancel's fence
 * takes the same lock. These tests land the fence while a reservation is in flight, both ways round.
 */
describe("reserve-stock against a cancel in flight", () => {
  let database: TestDatabase;
  const claimId = "3e0d3d43-1a4c-4b5e-9a1f-5f4f9a7c2d10";

  beforeAll(async () => {
    database = await createTestDatabase();
    otherPool = createDatabase(database.url);
    monitor = new Client({ connectionString: database.url });
    await monitor.connect();
  });
  afterAll(async () => {
    await monitor.end();
    await otherPool.$disconnect();
    await database.drop();
  });

  const inventory = () => createPrismaInventoryRepository(database.db);
  // The cleanup's fence comes from another connection pool, as from another replica of the app.
  let otherPool: Database;
  let monitor: Client;
  const records = () => createFulfilmentRecords(otherPool);

  async function claimedOrder(sku: string, stock: number): Promise<string> {
    await database.db.product.create({
      data: { sku, name: sku, unitPrice: 1000, currency: "usd", stockOnHand: stock },
    });
    const order = await database.db.order.create({
      data: {
        customerId: "cus_guard",
        email: "buyer@example.com",
        currency: "usd",
        total: 1000,
        status: "fulfilling",
        claimId,
      },
    });
    return order.id;
  }
  const stockOf = async (sku: string) =>
    (await database.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;
  // Asked outside any transaction: inside one, pg_stat_activity is a snapshot taken at first use.
  const lockWaiters = async () =>
    (
      await monitor.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'`,
      )
    ).rows[0]?.n ?? 0;

  it("a fence that commits first makes the waiting reservation take nothing", async () => {
    const orderId = await claimedOrder("GUARD-1", 5);
    const canceller = new Client({ connectionString: database.url });
    await canceller.connect();
    try {
      // The cancel holds the order row: its mark is written but not yet committed.
      await canceller.query("BEGIN");
      await canceller.query(`UPDATE orders SET cancel_requested_at = now() WHERE id = $1`, [orderId]);
      const reserving = inventory().reserve(orderId, [{ sku: "GUARD-1", quantity: 2 }], { claimId });
      await eventually("reservation waits for the order row", async () => (await lockWaiters()) >= 1);
      await canceller.query("COMMIT");

      expect(await reserving).toEqual({ ok: false, reason: "cancelled" });
    } finally {
      await canceller.end();
    }
    expect(await stockOf("GUARD-1")).toBe(5);
    expect(await database.db.stockReservation.count({ where: { orderId } })).toBe(0);
  });

  it("a reservation that commits first is seen by the release that follows the fence", async () => {
    const orderId = await claimedOrder("GUARD-2", 5);
    const blocker = new Client({ connectionString: database.url });
    await blocker.connect();
    let fenced: Promise<string> | undefined;
    try {
      // The reservation holds the order row while it waits for the product row.
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM products WHERE sku = 'GUARD-2' FOR UPDATE`);
      const reserving = inventory().reserve(orderId, [{ sku: "GUARD-2", quantity: 2 }], { claimId });
      await eventually("reservation waits", async () => (await lockWaiters()) >= 1);
      fenced = records().fenceForCancel(orderId);
      await eventually("fence waits behind the reservation", async () => (await lockWaiters()) >= 2);
      await blocker.query("COMMIT");
      expect(await reserving).toEqual({ ok: true, reserved: [{ sku: "GUARD-2", quantity: 2 }] });
    } finally {
      await blocker.end();
    }
    expect(await fenced).toBe("fenced");
    expect(await stockOf("GUARD-2")).toBe(3);
    expect(await inventory().release(orderId)).toEqual([{ sku: "GUARD-2", quantity: 2 }]);
    expect(await stockOf("GUARD-2")).toBe(5);
  });

  it("a reservation for a run the order was re-driven away from takes nothing", async () => {
    const orderId = await claimedOrder("GUARD-3", 5);
    const outcome = await inventory().reserve(orderId, [{ sku: "GUARD-3", quantity: 1 }], {
      claimId: "00000000-0000-4000-8000-000000000001",
    });
    expect(outcome).toEqual({ ok: false, reason: "superseded" });
    expect(await stockOf("GUARD-3")).toBe(5);
  });

  it("the fence refuses an order whose parcel is booked, and marks any other", async () => {
    const shipped = await claimedOrder("GUARD-4", 5);
    await database.db.order.update({ where: { id: shipped }, data: { status: "shipped" } });
    expect(await records().fenceForCancel(shipped)).toBe("shipped");
    expect(
      (await database.db.order.findUniqueOrThrow({ where: { id: shipped } })).cancelRequestedAt,
    ).toBeNull();

    const open = await claimedOrder("GUARD-5", 5);
    expect(await records().fenceForCancel(open)).toBe("fenced");
    expect(
      (await database.db.order.findUniqueOrThrow({ where: { id: open } })).cancelRequestedAt,
    ).not.toBeNull();
    expect(await records().fenceForCancel("00000000-0000-4000-8000-000000000002")).toBe("not-found");
  });

  it("the fence waiting on the order row sees the shipment committed meanwhile, and a second fence keeps the first mark", async () => {
    const shipping = await claimedOrder("GUARD-6", 5);
    const shipper = new Client({ connectionString: database.url });
    await shipper.connect();
    try {
      await shipper.query("BEGIN");
      await shipper.query(`UPDATE orders SET status = 'shipped' WHERE id = $1`, [shipping]);
      const fenced = records().fenceForCancel(shipping);
      await eventually("fence waits for the order row", async () => (await lockWaiters()) >= 1);
      await shipper.query("COMMIT");
      expect(await fenced).toBe("shipped");
    } finally {
      await shipper.end();
    }
    expect(
      (await database.db.order.findUniqueOrThrow({ where: { id: shipping } })).cancelRequestedAt,
    ).toBeNull();

    const open = await claimedOrder("GUARD-7", 5);
    expect(await records().fenceForCancel(open)).toBe("fenced");
    const first = (await database.db.order.findUniqueOrThrow({ where: { id: open } })).cancelRequestedAt;
    expect(await records().fenceForCancel(open)).toBe("fenced");
    expect((await database.db.order.findUniqueOrThrow({ where: { id: open } })).cancelRequestedAt).toEqual(
      first,
    );
  });
});
