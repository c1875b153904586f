import { Client } from "pg";
import type { OpsNotice } from "../../src/alerts";
import type { OrderStatus } from "../../src/generated/prisma/enums";
import { withStockHolds } from "../../src/inventory/holding-inventory";
import type { InventoryRepository } from "../../src/inventory/inventory";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import {
  createStockHolds,
  HoldOutOfStock,
  recordHolds,
  takeStockForHold,
  type StockHolds,
} from "../../src/inventory/stock-holds";
import { createLogger } from "../../src/logger";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { eventually } from "../support/eventually";

// Mutation testing (docs/mutation-testing.md, group `inventory`): the stock holds' store (take,
// record, convert exactly once, release exactly once, the sweep's query) and the inventory the
// workflow sees on top of it, driven directly against the database: no HTTP service, so a mutant
// costs a second, not the checkout harness's start-up (test/inventory/stock-holds.test.ts covers the
// same end to end).

describe("stock holds store and the holding inventory", () => {
  let database: TestDatabase;
  let holds: StockHolds;
  let inventory: InventoryRepository;
  const alerts: OpsNotice[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    holds = createStockHolds(database.db);
    inventory = withStockHolds(createPrismaInventoryRepository(database.db), {
      holds,
      alerts: { runFailed: async () => undefined, notify: async (notice) => void alerts.push(notice) },
      logger: createLogger({ level: "silent" }),
    });
  });
  afterAll(() => database.drop());
  beforeEach(() => {
    alerts.length = 0;
  });

  const addProduct = (sku: string, stockOnHand: number) =>
    database.db.product.create({ data: { sku, name: sku, unitPrice: 1000, currency: "usd", stockOnHand } });
  const stockOf = async (sku: string) =>
    (await database.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;
  const createOrder = async (status: OrderStatus = "pending", checkoutSessionId?: string) =>
    (
      await database.db.order.create({
        data: {
          customerId: "cus_holds",
          email: "buyer@example.com",
          currency: "usd",
          total: 1000,
          status,
          checkoutSessionId,
        },
      })
    ).id;
  /** What the checkout does in its transaction: take the stock, record the hold. */
  const hold = (orderId: string, lines: { sku: string; quantity: number }[], expiresAt: Date) =>
    database.db.$transaction(async (tx) => {
      await takeStockForHold(tx, lines);
      await recordHolds(tx, orderId, lines, expiresAt);
    });
  /** Sessions of this database waiting for a lock (asked on the pool, outside any transaction). */
  const lockWaiters = async () =>
    (
      await database.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'`
    )[0]?.n ?? 0;
  const timeline = (orderId: string) =>
    database.db.orderTimelineEntry.findMany({ where: { orderId }, orderBy: { id: "asc" } });

  it("a hold takes every line's stock or none, and names the short line with what is there", async () => {
    await addProduct("HOLD-A", 3);
    await addProduct("HOLD-B", 1);
    const orderId = await createOrder();
    const expiresAt = new Date("2026-12-01T12:00:00Z");

    const failed = hold(
      orderId,
      [
        { sku: "HOLD-A", quantity: 3 },
        { sku: "HOLD-B", quantity: 2 },
      ],
      expiresAt,
    );
    await expect(failed).rejects.toBeInstanceOf(HoldOutOfStock);
    await expect(failed).rejects.toMatchObject({
      name: "HoldOutOfStock",
      message: "out of stock: HOLD-B",
      sku: "HOLD-B",
      requested: 2,
      available: 1,
    });
    // The transaction rolled back: HOLD-A's units are still on the shelf, nothing is held.
    expect([await stockOf("HOLD-A"), await stockOf("HOLD-B")]).toEqual([3, 1]);
    expect(await holds.list(orderId)).toEqual([]);

    await expect(hold(orderId, [{ sku: "HOLD-NONE", quantity: 1 }], expiresAt)).rejects.toMatchObject({
      sku: "HOLD-NONE",
      available: 0,
    });

    await hold(
      orderId,
      [
        { sku: "HOLD-B", quantity: 1 },
        { sku: "HOLD-A", quantity: 2 },
      ],
      expiresAt,
    );
    expect([await stockOf("HOLD-A"), await stockOf("HOLD-B")]).toEqual([1, 0]);
    expect(await holds.list(orderId)).toEqual([
      { sku: "HOLD-A", quantity: 2, status: "held" },
      { sku: "HOLD-B", quantity: 1, status: "held" },
    ]);
  });

  it("writes a hold's stock to the ledger with its order, and a release's with the reason it came back", async () => {
    await addProduct("LEDGER-1", 5);
    const orderId = await createOrder("pending", "cs_ledger");
    await database.db.$transaction(async (tx) => {
      await takeStockForHold(tx, [{ sku: "LEDGER-1", quantity: 2 }], orderId);
      await recordHolds(tx, orderId, [{ sku: "LEDGER-1", quantity: 2 }], new Date());
    });
    await holds.release(orderId, "session expired");

    const movements = await database.db.stockMovement.findMany({
      where: { orderId },
      orderBy: { id: "asc" },
    });
    expect(
      movements.map(({ sku, delta, reason, actor, note, stockAfter }) => ({
        sku,
        delta,
        reason,
        actor,
        note,
        stockAfter,
      })),
    ).toEqual([
      { sku: "LEDGER-1", delta: -2, reason: "reserved", actor: "checkout", note: null, stockAfter: 3 },
      {
        sku: "LEDGER-1",
        delta: 2,
        reason: "released",
        actor: "checkout",
        note: "session expired",
        stockAfter: 5,
      },
    ]);
  });

  it("converts a hold into the reservation once, moving no stock, and answers the reservation after", async () => {
    await addProduct("CONV-A", 5);
    await addProduct("CONV-B", 5);
    const orderId = await createOrder("paid");
    await hold(
      orderId,
      [
        { sku: "CONV-B", quantity: 1 },
        { sku: "CONV-A", quantity: 2 },
      ],
      new Date(),
    );

    const reserved = [
      { sku: "CONV-A", quantity: 2 },
      { sku: "CONV-B", quantity: 1 },
    ];
    const [first, second] = await Promise.all([holds.convert(orderId), holds.convert(orderId)]);
    expect(first).toEqual({ ok: true, reserved });
    expect(second).toEqual({ ok: true, reserved });
    expect(await holds.convert(orderId)).toEqual({ ok: true, reserved });

    expect([await stockOf("CONV-A"), await stockOf("CONV-B")]).toEqual([3, 4]);
    expect(await holds.list(orderId)).toEqual([
      { sku: "CONV-A", quantity: 2, status: "converted" },
      { sku: "CONV-B", quantity: 1, status: "converted" },
    ]);
    expect(
      (await database.db.stockReservation.findMany({ where: { orderId }, orderBy: { sku: "asc" } })).map(
        ({ sku, quantity, status }) => ({ sku, quantity, status }),
      ),
    ).toEqual([
      { sku: "CONV-A", quantity: 2, status: "reserved" },
      { sku: "CONV-B", quantity: 1, status: "reserved" },
    ]);
    // A converted hold is no longer held: releasing holds gives nothing back.
    expect(await holds.release(orderId, "test")).toEqual([]);
    expect(await timeline(orderId)).toEqual([]);
  });

  it("with a run to record for, the conversion writes the run's stock-reserved entry from its outcome, once", async () => {
    await addProduct("REC-A", 5);
    await addProduct("REC-B", 5);
    const orderId = await createOrder("paid");
    await hold(
      orderId,
      [
        { sku: "REC-B", quantity: 1 },
        { sku: "REC-A", quantity: 2 },
      ],
      new Date(),
    );
    const reserved = [
      { sku: "REC-A", quantity: 2 },
      { sku: "REC-B", quantity: 1 },
    ];

    expect(await holds.convert(orderId, { runId: "run-rec" })).toEqual({
      ok: true,
      reserved,
      entriesRecorded: true,
    });
    // A retried step: the existing reservation, its entry not written twice.
    expect(await holds.convert(orderId, { runId: "run-rec" })).toEqual({
      ok: true,
      reserved,
      entriesRecorded: true,
    });
    const entries = await database.db.orderTimelineEntry.findMany({ where: { orderId } });
    expect(entries.map(({ kind, detail, runId }) => ({ kind, detail, runId }))).toEqual([
      { kind: "stock-reserved", detail: { ok: true, reserved }, runId: "run-rec" },
    ]);
    // Nothing to convert (no hold): no entry, and the caller records its own outcome.
    const none = await createOrder("paid");
    expect(await holds.convert(none, { runId: "run-rec" })).toBeNull();
    expect(await database.db.orderTimelineEntry.count({ where: { orderId: none } })).toBe(0);
  });

  it("two conversions of one hold at once both answer the reservation: the second waits for the first under the order's lock", async () => {
    await addProduct("CONC-1", 5);
    const orderId = await createOrder("paid");
    await hold(orderId, [{ sku: "CONC-1", quantity: 2 }], new Date());
    const blocker = new Client({ connectionString: database.url });
    await blocker.connect();
    try {
      // Hold the hold's row, so the first conversion stops at its status change and the second
      // arrives while the first is still in flight.
      await blocker.query("BEGIN");
      await blocker.query(`SELECT 1 FROM stock_holds WHERE order_id = $1 FOR UPDATE`, [orderId]);
      const both = Promise.all([holds.convert(orderId), holds.convert(orderId)]);
      await eventually("both conversions wait", async () => (await lockWaiters()) >= 2);
      await blocker.query("COMMIT");
      const reservation = { ok: true, reserved: [{ sku: "CONC-1", quantity: 2 }] };
      expect(await both).toEqual([reservation, reservation]);
    } finally {
      await blocker.end();
    }
    expect(await stockOf("CONC-1")).toBe(3);
  });

  it("the workflow's reserve converts an order's hold even when a cancel came first: the cleanup's release gives it back", async () => {
    await addProduct("LATE-1", 5);
    const claimId = "5d8e2f0a-9b1c-4e3d-8a7f-1c2b3d4e5f62";
    const orderId = await createOrder("paid");
    await hold(orderId, [{ sku: "LATE-1", quantity: 2 }], new Date());
    await database.db.order.update({
      where: { id: orderId },
      data: { status: "fulfilling", claimId, cancelRequestedAt: new Date() },
    });

    expect(await inventory.reserve(orderId, [{ sku: "LATE-1", quantity: 2 }], { claimId })).toEqual({
      ok: true,
      reserved: [{ sku: "LATE-1", quantity: 2 }],
    });
    expect(await stockOf("LATE-1")).toBe(3);
    expect(await inventory.release(orderId)).toEqual([{ sku: "LATE-1", quantity: 2 }]);
    expect(await stockOf("LATE-1")).toBe(5);
  });

  it("has nothing to convert for an order without a hold, or whose hold was released", async () => {
    await addProduct("NOHOLD-1", 5);
    const none = await createOrder("paid");
    expect(await holds.convert(none)).toBeNull();

    const released = await createOrder("paid");
    await hold(released, [{ sku: "NOHOLD-1", quantity: 2 }], new Date());
    expect(await holds.release(released)).toEqual([{ sku: "NOHOLD-1", quantity: 2 }]);
    expect(await holds.convert(released)).toBeNull();
    expect(await database.db.stockReservation.count({ where: { orderId: released } })).toBe(0);
    expect(await stockOf("NOHOLD-1")).toBe(5);
  });

  it("releases held stock once, by SKU, and writes the reason to the timeline only when given and something came back", async () => {
    await addProduct("REL-A", 4);
    await addProduct("REL-B", 4);
    const orderId = await createOrder("expired");
    await hold(
      orderId,
      [
        { sku: "REL-B", quantity: 3 },
        { sku: "REL-A", quantity: 1 },
      ],
      new Date(),
    );

    const [first, second] = await Promise.all([
      holds.release(orderId, "session expired"),
      holds.release(orderId, "session expired"),
    ]);
    expect([...first, ...second]).toEqual([
      { sku: "REL-A", quantity: 1 },
      { sku: "REL-B", quantity: 3 },
    ]);
    expect(await holds.release(orderId, "again")).toEqual([]);
    expect([await stockOf("REL-A"), await stockOf("REL-B")]).toEqual([4, 4]);
    expect(await holds.list(orderId)).toEqual([
      { sku: "REL-A", quantity: 1, status: "released" },
      { sku: "REL-B", quantity: 3, status: "released" },
    ]);
    expect((await timeline(orderId)).map(({ kind, detail }) => ({ kind, detail }))).toEqual([
      {
        kind: "stock-hold-released",
        detail: {
          reason: "session expired",
          released: [
            { sku: "REL-A", quantity: 1 },
            { sku: "REL-B", quantity: 3 },
          ],
        },
      },
    ]);

    // Without a reason, nothing is written.
    const quiet = await createOrder("expired");
    await hold(quiet, [{ sku: "REL-A", quantity: 1 }], new Date());
    expect(await holds.release(quiet)).toEqual([{ sku: "REL-A", quantity: 1 }]);
    expect(await timeline(quiet)).toEqual([]);
  });

  it("finds the stale holds: orders out of the live statuses, and pending ones past expiry, longest expired first, at most `limit`", async () => {
    await database.db.stockHold.deleteMany();
    await addProduct("STALE-1", 100);
    const t = (minute: number) => new Date(Date.UTC(2026, 11, 1, 12, minute));
    const cutoff = t(30);
    const pendingExpired = await createOrder("pending", "cs_pending_expired");
    await hold(pendingExpired, [{ sku: "STALE-1", quantity: 1 }], t(20));
    const pendingLive = await createOrder("pending", "cs_pending_live");
    await hold(pendingLive, [{ sku: "STALE-1", quantity: 1 }], t(40));
    const failed = await createOrder("payment_failed");
    await hold(failed, [{ sku: "STALE-1", quantity: 1 }], t(50));
    const cancelled = await createOrder("cancelled");
    await hold(cancelled, [{ sku: "STALE-1", quantity: 1 }], t(10));
    // Paid (or further) orders keep their hold whatever its expiry: the run converts it.
    for (const status of ["payment_processing", "authorized", "paid", "fulfilling"] as const) {
      const live = await createOrder(status);
      await hold(live, [{ sku: "STALE-1", quantity: 1 }], t(0));
    }
    const alreadyReleased = await createOrder("expired");
    await hold(alreadyReleased, [{ sku: "STALE-1", quantity: 1 }], t(5));
    await holds.release(alreadyReleased);

    expect(await holds.findStale({ expiredBefore: cutoff, limit: 10 })).toEqual([
      { orderId: cancelled, status: "cancelled", checkoutSessionId: null, expiresAt: t(10) },
      {
        orderId: pendingExpired,
        status: "pending",
        checkoutSessionId: "cs_pending_expired",
        expiresAt: t(20),
      },
      { orderId: failed, status: "payment_failed", checkoutSessionId: null, expiresAt: t(50) },
    ]);
    expect((await holds.findStale({ expiredBefore: cutoff, limit: 2 })).map((s) => s.orderId)).toEqual([
      cancelled,
      pendingExpired,
    ]);
    // Exactly at its expiry a pending session is not yet stale.
    expect((await holds.findStale({ expiredBefore: t(20), limit: 10 })).map((s) => s.orderId)).toEqual([
      cancelled,
      failed,
    ]);
  });

  it("the workflow's reserve converts the hold, or takes stock afresh without one, passing the guard on", async () => {
    await addProduct("WF-1", 5);
    const claimId = "5d8e2f0a-9b1c-4e3d-8a7f-1c2b3d4e5f60";
    const held = await createOrder("paid");
    await hold(held, [{ sku: "WF-1", quantity: 2 }], new Date());
    expect(await inventory.reserve(held, [{ sku: "WF-1", quantity: 2 }])).toEqual({
      ok: true,
      reserved: [{ sku: "WF-1", quantity: 2 }],
    });
    expect(await stockOf("WF-1")).toBe(3);

    const unheld = await createOrder("paid");
    expect(await inventory.reserve(unheld, [{ sku: "WF-1", quantity: 1 }])).toEqual({
      ok: true,
      reserved: [{ sku: "WF-1", quantity: 1 }],
    });
    expect(await stockOf("WF-1")).toBe(2);

    // The guard reaches the repository: a claim that does not own the order takes nothing.
    const owned = await database.db.order.update({
      where: { id: await createOrder("fulfilling") },
      data: { claimId },
    });
    expect(
      await inventory.reserve(owned.id, [{ sku: "WF-1", quantity: 1 }], {
        claimId: "00000000-0000-4000-8000-000000000009",
      }),
    ).toEqual({ ok: false, reason: "superseded" });
    expect(await stockOf("WF-1")).toBe(2);
    expect(alerts).toEqual([]);
  });

  it("alerts ops with the short line's details when an order without a hold finds no stock, and only then", async () => {
    await addProduct("WF-SHORT", 1);
    const orderId = await createOrder("paid");

    const outcome = await inventory.reserve(orderId, [{ sku: "WF-SHORT", quantity: 3 }]);

    expect(outcome).toEqual({
      ok: false,
      reason: "out_of_stock",
      sku: "WF-SHORT",
      requested: 3,
      available: 1,
    });
    expect(alerts).toEqual([
      {
        title: "Stock problem: a paid order found no stock",
        fields: {
          orderId,
          sku: "WF-SHORT",
          requested: 3,
          available: 1,
          cause: expect.stringMatching(/held no stock at payment/),
          action: expect.stringMatching(/^Not a failed run/),
        },
      },
    ]);

    // A refusal that is not about stock (a cancelled order) is no stock problem.
    alerts.length = 0;
    const cancelled = await database.db.order.update({
      where: { id: await createOrder("cancelled") },
      data: { claimId: "5d8e2f0a-9b1c-4e3d-8a7f-1c2b3d4e5f61" },
    });
    expect(
      await inventory.reserve(cancelled.id, [{ sku: "WF-SHORT", quantity: 1 }], {
        claimId: "5d8e2f0a-9b1c-4e3d-8a7f-1c2b3d4e5f61",
      }),
    ).toEqual({ ok: false, reason: "cancelled" });
    expect(alerts).toEqual([]);
  });

  it("release gives back the reservation and any hold still there, once", async () => {
    await addProduct("BACK-A", 5);
    await addProduct("BACK-B", 5);
    // Reserved without a hold, then (a cancel) a hold for another line is still there.
    const orderId = await createOrder("paid");
    await inventory.reserve(orderId, [{ sku: "BACK-A", quantity: 2 }]);
    await hold(orderId, [{ sku: "BACK-B", quantity: 3 }], new Date());
    expect([await stockOf("BACK-A"), await stockOf("BACK-B")]).toEqual([3, 2]);

    expect(await inventory.release(orderId)).toEqual([
      { sku: "BACK-A", quantity: 2 },
      { sku: "BACK-B", quantity: 3 },
    ]);
    expect(await inventory.release(orderId)).toEqual([]);
    expect([await stockOf("BACK-A"), await stockOf("BACK-B")]).toEqual([5, 5]);
  });

  it("lists and finds products through the holding inventory as the repository does", async () => {
    await addProduct("PASS-1", 7);
    expect(await inventory.findProducts(["PASS-1"])).toEqual([
      { sku: "PASS-1", name: "PASS-1", unitPrice: 1000, currency: "usd", quantityAvailable: 7 },
    ]);
    expect((await inventory.listProducts()).find((p) => p.sku === "PASS-1")).toEqual({
      sku: "PASS-1",
      name: "PASS-1",
      unitPrice: 1000,
      currency: "usd",
      quantityAvailable: 7,
    });
  });
});
