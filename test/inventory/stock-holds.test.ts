import type { OpsNotice } from "../../src/alerts";
import { withStockHolds } from "../../src/inventory/holding-inventory";
import type { InventoryRepository } from "../../src/inventory/inventory";
import { createPrismaInventoryRepository } from "../../src/inventory/prisma-inventory-repository";
import { createStockHolds, type StockHolds } from "../../src/inventory/stock-holds";
import { createLogger } from "../../src/logger";
import { defined } from "../support/defined";
import { IntakeHarness } from "../orders/intake-harness";

/**
 * The stock is held when the Checkout Session is made, for as long as it can be paid; released on expiry, on
 * an async payment failure and by the sweep; converted into the reservation by the workflow's reserve step
 * (the very call it makes).
 */
describe("stock held at checkout", () => {
  let h: IntakeHarness;
  let holds: StockHolds;
  let inventory: InventoryRepository;
  const alerts: OpsNotice[] = [];

  beforeAll(async () => {
    h = await IntakeHarness.start();
    holds = createStockHolds(h.db);
    inventory = withStockHolds(createPrismaInventoryRepository(h.db), {
      holds,
      alerts: {
        runFailed: async () => undefined,
        notify: async (notice) => void alerts.push(notice),
      },
      logger: createLogger({ level: "silent" }),
    });
  });
  afterAll(() => h.close());

  const addProduct = (sku: string, stockOnHand: number) =>
    h.db.product.create({ data: { sku, name: sku, unitPrice: 1000, currency: "usd", stockOnHand } });
  const stockOf = async (sku: string) =>
    (await h.db.product.findUniqueOrThrow({ where: { sku } })).stockOnHand;
  const checkout = async (customerId: string, sku: string, quantity = 1) => {
    const res = await fetch(`${h.url}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ customerId, email: "race@example.com", items: [{ sku, quantity }] }),
    });
    const body = (await res.json()) as { orderId?: string; checkoutSessionId?: string };
    return { status: res.status, orderId: body.orderId, checkoutSessionId: body.checkoutSessionId };
  };

  /** Units held, reserved and on the shelf never add up to more than there were. */
  async function accounted(sku: string) {
    const held = await h.db.stockHold.aggregate({ where: { sku, status: "held" }, _sum: { quantity: true } });
    const reserved = await h.db.stockReservation.aggregate({
      where: { sku, status: "reserved" },
      _sum: { quantity: true },
    });
    return {
      onHand: await stockOf(sku),
      held: held._sum.quantity ?? 0,
      reserved: reserved._sum.quantity ?? 0,
    };
  }

  it("hold stock at checkout: 30 concurrent checkouts for 8 units, then every session paid or expired: never oversold, every hold released or converted", async () => {
    await addProduct("RACE-HOLD", 8);
    const attempts = await Promise.all(
      Array.from({ length: 30 }, (_, i) => checkout(`cus-race-${i}`, "RACE-HOLD")),
    );
    const won = attempts.filter((a) => a.status === 201);
    expect(won).toHaveLength(8);
    expect(attempts.filter((a) => a.status === 409)).toHaveLength(22);
    expect(await accounted("RACE-HOLD")).toEqual({ onHand: 0, held: 8, reserved: 0 });

    const sessions = won.map((w) => ({
      orderId: defined(w.orderId),
      sessionId: defined(w.checkoutSessionId),
    }));
    const at = (index: number) => defined(sessions[index]);
    const [card1, card2, card3, asyncOk, asyncFail, expired1, expired2, unseen] = [
      at(0),
      at(1),
      at(2),
      at(3),
      at(4),
      at(5),
      at(6),
      at(7),
    ] as const;
    // Stripe delivers each outcome to the service's webhook, as in production.
    const results = await Promise.all([
      h.sandbox.completeCheckoutSession(card1.sessionId, "authorized"),
      h.sandbox.completeCheckoutSession(card2.sessionId, "authorized"),
      h.sandbox.completeCheckoutSession(card3.sessionId, "authorized"),
      h.sandbox.completeCheckoutSession(asyncOk.sessionId, "async_pending"),
      h.sandbox.completeCheckoutSession(asyncFail.sessionId, "async_pending"),
      h.sandbox.expireCheckoutSession(expired1.sessionId),
      h.sandbox.expireCheckoutSession(expired2.sessionId),
      // Expired at Stripe, but the webhook never arrives.
      h.sandbox.expireCheckoutSession(unseen.sessionId, { deliver: false }),
    ]);
    results.push(
      await h.sandbox.settleAsyncPayment(asyncOk.sessionId, true),
      await h.sandbox.settleAsyncPayment(asyncFail.sessionId, false),
    );
    expect(results.flatMap((r) => r.deliveries).every((d) => d.status === 200)).toBe(true);
    // Expired and failed checkouts gave their units back at once; the unseen one still holds.
    expect(await accounted("RACE-HOLD")).toEqual({ onHand: 3, held: 5, reserved: 0 });

    // The sweep, once the unseen session is past its expires_at, asks Stripe and releases it.
    const expiresAt = (await h.db.stockHold.findFirstOrThrow({ where: { orderId: unseen.orderId } }))
      .expiresAt;
    const afterExpiry = new Date(expiresAt.getTime() + 10 * 60_000);
    // Meanwhile the workflow's reserve step runs for the paid orders, racing the sweep.
    const paid = [card1, card2, card3, asyncOk];
    const [swept, ...reserved] = await Promise.all([
      h.checkoutSweep.releaseStaleHolds(afterExpiry),
      ...paid.map((p) => inventory.reserve(p.orderId, [{ sku: "RACE-HOLD", quantity: 1 }])),
    ]);
    expect(swept).toMatchObject({ expired: 1, failed: 0 });
    expect(reserved.every((r) => r?.ok)).toBe(true);
    expect(await h.db.order.findUniqueOrThrow({ where: { id: unseen.orderId } })).toMatchObject({
      status: "expired",
    });

    // Never oversold: 4 reserved from their holds, 4 back on the shelf, nothing left held.
    expect(await accounted("RACE-HOLD")).toEqual({ onHand: 4, held: 0, reserved: 4 });
    const statuses = await h.db.stockHold.groupBy({
      by: ["status"],
      where: { sku: "RACE-HOLD" },
      _count: { _all: true },
    });
    expect(Object.fromEntries(statuses.map((s) => [s.status, s._count._all]))).toEqual({
      converted: 4,
      released: 4,
    });
    // A second sweep and a retried reserve change nothing.
    expect(await h.checkoutSweep.releaseStaleHolds(afterExpiry)).toMatchObject({ expired: 0, released: 0 });
    await inventory.reserve(card1.orderId, [{ sku: "RACE-HOLD", quantity: 1 }]);
    expect(await accounted("RACE-HOLD")).toEqual({ onHand: 4, held: 0, reserved: 4 });
    // The units released are for sale again.
    expect((await checkout("cus-race-late", "RACE-HOLD", 4)).status).toBe(201);
    expect(alerts).toHaveLength(0);
  });

  it("the sweep keeps the hold of a session that was paid although its webhook was missed", async () => {
    await addProduct("PAID-UNSEEN", 2);
    const { orderId, checkoutSessionId } = await checkout("cus-paid-unseen", "PAID-UNSEEN");
    await h.sandbox.completeCheckoutSession(defined(checkoutSessionId), "authorized", { deliver: false });
    const far = new Date(Date.now() + 48 * 3600_000);
    const swept = await h.checkoutSweep.releaseStaleHolds(far);
    expect(swept.kept).toBeGreaterThanOrEqual(1);
    expect(await holds.list(defined(orderId))).toEqual([{ sku: "PAID-UNSEEN", quantity: 1, status: "held" }]);
    expect(await stockOf("PAID-UNSEEN")).toBe(1);
  });

  it("releases the hold of an order cancelled before its run converted it (release gives back holds too)", async () => {
    await addProduct("CANCEL-HOLD", 3);
    const { orderId } = await checkout("cus-cancel-hold", "CANCEL-HOLD", 2);
    expect(await stockOf("CANCEL-HOLD")).toBe(1);
    expect(await inventory.release(defined(orderId))).toEqual([{ sku: "CANCEL-HOLD", quantity: 2 }]);
    expect(await inventory.release(defined(orderId))).toEqual([]);
    expect(await stockOf("CANCEL-HOLD")).toBe(3);
  });

  it("alerts ops to a stock problem when a paid order held no stock and none is left", async () => {
    await addProduct("LOST-HOLD", 1);
    const { orderId } = await checkout("cus-lost-hold", "LOST-HOLD");
    // The hold is lost (released by hand, say) and the last unit sold elsewhere.
    await holds.release(defined(orderId), "test: lost");
    await h.db.product.update({ where: { sku: "LOST-HOLD" }, data: { stockOnHand: 0 } });
    const outcome = await inventory.reserve(defined(orderId), [{ sku: "LOST-HOLD", quantity: 1 }]);
    expect(outcome).toMatchObject({ ok: false, reason: "out_of_stock", sku: "LOST-HOLD" });
    expect(alerts).toEqual([
      expect.objectContaining({
        title: expect.stringMatching(/^Stock problem/),
        fields: expect.objectContaining({
          orderId,
          sku: "LOST-HOLD",
          action: expect.stringMatching(/Not a failed run/),
        }),
      }),
    ]);
  });
});
