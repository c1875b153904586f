import { startShopLifecycleApp } from "../support/shop-lifecycle-app";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(300_000);

/**
 * Issue 40's must-show: a shop's own Inngest app, registered on the engine beside ours, counts the
 * lifecycle events of one order through payment, a failed run and its re-drive, shipping, a partial
 * refund, delivery and a return, with Stripe's webhook delivered three times: each fact once.
 */
describe("lifecycle events reach a shop's own Inngest function once each", () => {
  let h: WorkflowHarness;
  let shop: Awaited<ReturnType<typeof startShopLifecycleApp>>;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_RESTOCKING_FEE: "0", RETURN_WINDOW: "30d" } });
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
    await h.addProduct("LC-1", 10, 2500);

    // The shop's app: its own client id and serve endpoint, one counting function per event.
    shop = await startShopLifecycleApp({
      engineUrl: new URL(h.services.config.INNGEST_RUN_URL_TEMPLATE ?? "").origin,
      sync: (url) => h.engine.sync(url),
    });
  });
  afterAll(async () => {
    await h.close();
    await shop.close();
  });

  const api = (path: string, body?: unknown) =>
    fetch(`${h.appUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body ?? {}),
    });
  /** Sends what the outbox holds and runs what that started. */
  const publishAndRun = async (rounds = 2) => {
    await h.services.lifecycleEvents.drain();
    await h.settle(rounds);
    await h.services.lifecycleEvents.drain();
    await h.settle(1);
  };
  /** Runs the engine round by round until `check` holds: a state, never a duration. */
  const runUntil = async (what: string, check: () => Promise<boolean>) => {
    for (let round = 0; round < 40; round++) {
      if (await check()) return;
      await publishAndRun(1);
    }
    throw new Error(`never became true: ${what}`);
  };

  it("payment (webhook x3), a failed run re-driven, shipping, a partial refund, delivery, a return", async () => {
    const checkout = await fetch(`${h.appUrl}/api/checkout`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        customerId: "cus_lifecycle",
        email: "life@example.com",
        items: [{ sku: "LC-1", quantity: 2 }],
      }),
    });
    expect(checkout.status).toBe(201);
    const { orderId, checkoutSessionId } = (await checkout.json()) as {
      orderId: string;
      checkoutSessionId: string;
    };

    // The first run fails for good after the capture (the parcel cannot be recorded).
    await h.db.$executeRawUnsafe(
      `CREATE FUNCTION lc_refuse_shipment() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'database unavailable'; END $$`,
    );
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER lc_refuse_shipment BEFORE INSERT ON shipments FOR EACH ROW EXECUTE FUNCTION lc_refuse_shipment()`,
    );
    try {
      const completed = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
      // Stripe delivers the checkout's webhooks three times in all.
      for (const event of completed.events)
        for (let i = 0; i < 2; i++) expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
      await h.settle(20);
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER lc_refuse_shipment ON shipments`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION lc_refuse_shipment()`);
    }
    expect((await h.order(orderId)).payment?.status).toBe("captured");
    await publishAndRun();
    expect(shop.countsOf(orderId)).toEqual({ "shop/order.paid.v1": 1, "shop/order.failed.v1": 1 });

    expect((await api(`/api/orders/${orderId}/redrive`)).status).toBe(202);
    await publishAndRun(4);
    expect((await h.order(orderId)).status).toBe("shipped");

    expect((await api(`/api/orders/${orderId}/refund`, { amount: 700 })).status).toBe(201);
    await h.sandbox.deliveriesSettled();
    await publishAndRun();

    await h.easyPost.advanceTracker(`order-${orderId}`, "in_transit");
    await h.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await publishAndRun();
    expect((await h.order(orderId)).status).toBe("delivered");

    const created = await api(`/api/orders/${orderId}/returns`, {
      lines: [{ sku: "LC-1", quantity: 1 }],
      reason: "damaged",
    });
    expect(created.status).toBe(201);
    const labelled = async () =>
      (await h.db.return.findFirst({ where: { orderId } }))?.labelTrackingNumber ?? "";
    await runUntil("the return's label bought", async () => (await labelled()) !== "");
    const trackingNumber = await labelled();
    await h.easyPost.advanceTracker(trackingNumber, "in_transit");
    await h.easyPost.advanceTracker(trackingNumber, "delivered");
    await runUntil(
      "the return closed",
      async () => (await h.db.return.findFirstOrThrow({ where: { orderId } })).status === "closed",
    );
    await publishAndRun();

    const expected = {
      "shop/order.paid.v1": 1,
      "shop/order.failed.v1": 1,
      "shop/order.shipped.v1": 1,
      "shop/order.refunded.v1": 2,
      "shop/order.delivered.v1": 1,
      "shop/return.requested.v1": 1,
      "shop/return.received.v1": 1,
      "shop/return.refunded.v1": 1,
    };
    // Every fact of the order sent, none refused by its schema.
    const unsent = await h.db.lifecycleOutboxEntry.findMany({
      where: { orderId, OR: [{ sentAt: null }, { lastError: { not: null } }] },
    });
    expect(unsent).toEqual([]);
    expect(shop.countsOf(orderId)).toEqual(expected);
    const refunds = shop.received.filter((e) => e.orderId === orderId && e.name === "shop/order.refunded.v1");
    const sources = await h.db.lifecycleOutboxEntry.findMany({
      where: { orderId, name: "shop/order.refunded.v1" },
      orderBy: { id: "asc" },
    });
    expect(sources.map((row) => (row.data as { source: string; amount: number }).source)).toEqual([
      "ops",
      "return",
    ]);
    expect(new Set(refunds.map((e) => e.id)).size).toBe(2);

    // Everything again: Stripe's events redelivered, the outbox drained, the engine run. Nothing new.
    const stripeEvents = await h.db.stripeEvent.findMany({ where: { orderId } });
    for (const event of stripeEvents) expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
    await publishAndRun();
    expect(shop.countsOf(orderId)).toEqual(expected);
    expect(await h.db.lifecycleOutboxEntry.count({ where: { orderId, sentAt: null } })).toBe(0);
  });

  it("finds an order's runs by its id on the local engine: ours and the shop's", async () => {
    const [order] = await h.db.order.findMany({ where: { customerId: "cus_lifecycle" } });
    const orderId = order?.id ?? "";
    const engineUrl = new URL(h.services.config.INNGEST_RUN_URL_TEMPLATE ?? "").origin;
    const res = await fetch(`${engineUrl}/v1/runs?order_id=${orderId}&limit=200`);
    const runs = (
      (await res.json()) as { data: { function_id: string; event: { data: { orderId?: string } } }[] }
    ).data;
    expect(runs.every((run) => run.event.data.orderId === orderId)).toBe(true);
    const functions = new Set(runs.map((run) => run.function_id));
    expect(functions).toContain("shop-fulfill-order");
    expect(functions).toContain("the-shop-count-shop-order-paid-v1");
    expect(functions).toContain("shop-process-return");
  });
});
