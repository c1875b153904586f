import express from "express";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Inngest } from "inngest";
import { serve } from "inngest/express";
import { lifecycleEvents } from "../../src/events/lifecycle";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(300_000);

/**
 * Issue 40's must-show: a shop's own Inngest app, registered on the engine beside ours, counts the
 * lifecycle events of one order through payment, a failed run and its re-drive, shipping, a partial
 * refund, delivery and a return, with Stripe's webhook delivered three times: each fact once.
 */
describe("lifecycle events reach a shop's own Inngest function once each", () => {
  let h: WorkflowHarness;
  let shopServer: http.Server;
  const received: { id: string; name: string; orderId: string | undefined }[] = [];

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_RESTOCKING_FEE: "0", RETURN_WINDOW: "30d" } });
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
    await h.addProduct("LC-1", 10, 2500);

    // The shop's app: its own client id and serve endpoint, one counting function per event.
    const engineUrl = new URL(h.services.config.INNGEST_RUN_URL_TEMPLATE ?? "").origin;
    const shop = new Inngest({ id: "the-shop", isDev: true, baseUrl: engineUrl });
    const functions = Object.keys(lifecycleEvents).map((name) =>
      shop.createFunction(
        { id: `count-${name.replace(/[^a-z0-9]+/g, "-")}`, triggers: [{ event: name }] },
        ({ event }) => {
          const data = event.data as { orderId?: string };
          received.push({ id: event.id ?? "", name: event.name, orderId: data.orderId });
          return "counted";
        },
      ),
    );
    const app = express();
    app.use(express.json({ limit: "4mb" }));
    app.use("/api/inngest", serve({ client: shop, functions }));
    shopServer = http.createServer(app);
    await new Promise<void>((resolve) => shopServer.listen(0, "127.0.0.1", resolve));
    await h.engine.sync(`http://127.0.0.1:${(shopServer.address() as AddressInfo).port}/api/inngest`);
  });
  afterAll(async () => {
    await h.close();
    await new Promise<void>((resolve) => shopServer.close(() => resolve()));
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
  const countsOf = (orderId: string) => {
    const counts: Record<string, number> = {};
    for (const event of received.filter((e) => e.orderId === orderId))
      counts[event.name] = (counts[event.name] ?? 0) + 1;
    return counts;
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
    expect(countsOf(orderId)).toEqual({ "shop/order.paid.v1": 1, "shop/order.failed.v1": 1 });

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
    expect(countsOf(orderId)).toEqual(expected);
    const refunds = received.filter((e) => e.orderId === orderId && e.name === "shop/order.refunded.v1");
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
    expect(countsOf(orderId)).toEqual(expected);
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
