import type pg from "pg";
import { createDatabase, sqlPool, type Database } from "../../src/db/client";
import { createLifecycleOutbox, type LifecycleEventSink } from "../../src/events/lifecycle-outbox";
import { parseLifecycleEvent } from "../../src/events/lifecycle";
import { createLogger } from "../../src/logger";
import { recordInTransaction } from "../../src/timeline/in-transaction";
import { createTimeline } from "../../src/timeline/timeline";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { eventually } from "../support/eventually";

type Sent = { id: string; name: string; data: object; ts: number };

/**
 * The lifecycle outbox (issue 40, decision 0196): the triggers write one event per fact in the
 * fact's own transaction (none for a rolled-back one), and the sender publishes each pending row
 * with its stable id, again after a failed or interrupted send, woken by NOTIFY.
 */
describe("lifecycle outbox", () => {
  let database: TestDatabase;
  let db: Database;
  let pool: pg.Pool;
  const logger = createLogger({ level: "silent" });

  beforeAll(async () => {
    database = await createTestDatabase();
    db = createDatabase(database.url, { maxConnections: 3 });
    pool = sqlPool(db);
  });
  afterAll(async () => {
    await db.$disconnect();
    await database.drop();
  });

  async function newOrder(): Promise<string> {
    const order = await db.order.create({
      data: { customerId: "cus_outbox", email: "o@example.com", currency: "usd", total: 4200 },
    });
    return order.id;
  }
  const rowsOf = (orderId: string) =>
    db.lifecycleOutboxEntry.findMany({ where: { orderId }, orderBy: { id: "asc" } });

  it("writes one event per fact, with an id from the fact, and none for a rolled-back one", async () => {
    const orderId = await newOrder();
    const timeline = createTimeline(db);
    await timeline.record(orderId, "payment-received", {});
    // The run's capture of the same money is the same fact: still one shop/order.paid.v1.
    await timeline.record(orderId, "payment-captured", { amount: 4200 }, "run-1");
    await timeline.record(orderId, "shipment-booked", {
      carrier: "USPS",
      trackingNumber: "TRK-1",
      trackingUrl: "https://track.example/TRK-1",
      parcels: [
        { parcelNumber: 1, carrier: "USPS", trackingNumber: "TRK-1" },
        { parcelNumber: 2, carrier: "USPS", trackingNumber: "TRK-2" },
      ],
    });
    await timeline.record(orderId, "claimed", {}, "run-1");
    await expect(
      db.$transaction(async (tx) => {
        await recordInTransaction(tx, orderId, "refund-issued", { stripeRefund: "re_rolled", amount: 500 });
        throw new Error("the refund's transaction fails after its entry");
      }),
    ).rejects.toThrow(/fails after/);
    await db.$transaction((tx) =>
      recordInTransaction(tx, orderId, "refund-issued", { stripeRefund: "re_kept", amount: 700 }),
    );
    // Stripe's webhook reports the same refund again.
    await timeline.record(orderId, "refund-recorded", { refundId: "re_kept", amount: 700, currency: "usd" });

    const rows = await rowsOf(orderId);
    expect(rows.map((row) => [row.name, row.eventId])).toEqual([
      ["shop/order.paid.v1", `lifecycle-order-paid-${orderId}`],
      ["shop/order.shipped.v1", `lifecycle-order-shipped-${orderId}-TRK-1`],
      ["shop/order.shipped.v1", `lifecycle-order-shipped-${orderId}-TRK-2`],
      ["shop/order.refunded.v1", `lifecycle-order-refunded-re_kept`],
    ]);
    expect(rows[0]?.data).toMatchObject({ orderId, amount: 4200, currency: "usd", customerId: "cus_outbox" });
    expect(rows[1]?.data).toMatchObject({ parcelNumber: 1, trackingUrl: "https://track.example/TRK-1" });
    expect(rows[3]?.data).toMatchObject({ refundId: "re_kept", amount: 700, source: "ops" });
    for (const row of rows) expect(() => parseLifecycleEvent(row.name, row.data)).not.toThrow();
  });

  it("writes shop/stock.low.v1 once per crossing of a product's threshold", async () => {
    await db.product.create({
      data: {
        sku: "LOW-1",
        name: "Low",
        unitPrice: 100,
        currency: "usd",
        stockOnHand: 2,
        lowStockThreshold: 3,
      },
    });
    await pool.query(`UPDATE products SET low_stock_alerted_at = now() WHERE sku = 'LOW-1'`);
    await pool.query(`UPDATE products SET stock_on_hand = 1 WHERE sku = 'LOW-1'`);
    const rows = await db.lifecycleOutboxEntry.findMany({ where: { name: "shop/stock.low.v1" } });
    expect(rows).toHaveLength(1);
    expect(parseLifecycleEvent("shop/stock.low.v1", rows[0]?.data).data).toMatchObject({
      sku: "LOW-1",
      stockOnHand: 2,
      threshold: 3,
    });
  });

  it("sends each pending row with its id, again after a failed send, and marks it sent", async () => {
    const orderId = await newOrder();
    await createTimeline(db).record(orderId, "delivered", {});
    const sent: Sent[] = [];
    let failNext = true;
    const sink: LifecycleEventSink = {
      send: async (events) => {
        // Inngest took the batch, but the answer was lost: the rows stay pending.
        sent.push(...events);
        if (failNext) {
          failNext = false;
          throw new Error("connection reset");
        }
      },
    };
    const outbox = createLifecycleOutbox({ pool, databaseUrl: database.url, sink, logger });
    await expect(outbox.drain()).rejects.toThrow(/connection reset/);
    expect((await rowsOf(orderId))[0]?.sentAt).toBeNull();
    await outbox.drain();
    const delivered = sent.filter((event) => event.name === "shop/order.delivered.v1");
    // Sent twice with one id: Inngest keeps the first and drops the second.
    expect(delivered.map((event) => event.id)).toEqual([
      `lifecycle-order-delivered-${orderId}`,
      `lifecycle-order-delivered-${orderId}`,
    ]);
    expect((await rowsOf(orderId))[0]?.sentAt).not.toBeNull();
    expect(await outbox.drain()).toBe(0);
  });

  it("once started, sends a committed fact when PostgreSQL notifies, and stops cleanly", async () => {
    const sent: Sent[] = [];
    const outbox = createLifecycleOutbox({
      pool,
      databaseUrl: database.url,
      sink: { send: async (events) => void sent.push(...events) },
      logger,
      // No sweep within the test: only the notification can wake it.
      sweepEveryMs: 3_600_000,
    });
    await outbox.start();
    try {
      await eventually("the backlog sent at start", async () => (await outbox.drain()) === 0);
      const orderId = await newOrder();
      await createTimeline(db).record(orderId, "cancelled", {});
      await eventually("the cancellation sent", () =>
        sent.some((e) => e.id === `lifecycle-order-cancelled-${orderId}`),
      );
      expect(sent.filter((e) => e.id === `lifecycle-order-cancelled-${orderId}`)).toHaveLength(1);
      expect(sent.find((e) => e.id === `lifecycle-order-cancelled-${orderId}`)?.data).toMatchObject({
        orderId,
        reason: "cancelled",
      });
    } finally {
      await outbox.stop();
    }
  });
});
