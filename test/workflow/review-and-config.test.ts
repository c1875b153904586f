import request from "supertest";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

const day = 24 * 3600 * 1000;

describe("review requests, the carrier webhook and the registered configuration", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("REVIEW-1", 10);
  });
  afterAll(() => h.close());

  it("asks for a review at REVIEW_DELAY when no delivery event ever comes", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_nodelivery",
      items: [{ sku: "REVIEW-1", quantity: 1 }],
    });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);

    await h.engine.clock.advance(13 * day);
    await h.engine.drain();
    expect(h.mailsTo(/How was your order/)).toHaveLength(0);

    await h.engine.clock.advance(1 * day + 60_000);
    await h.engine.drain();
    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Completed");
    expect(h.mailsTo(/How was your order/)).toHaveLength(1);
    const order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(order.timeline.at(-1)).toMatchObject({
      kind: "review-requested",
      detail: expect.objectContaining({ afterDelivery: false }),
    });
  });

  it("turns EasyPost's signed tracker event into the delivery event the run waits for", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_carrier",
      items: [{ sku: "REVIEW-1", quantity: 1 }],
    });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);
    const { shipment } = await h.order(orderId);
    const { delivery } = await h.easyPost.advanceTracker(shipment?.trackingNumber ?? "", "delivered");
    expect(delivery?.responseStatus).toBe(200);
    await h.engine.drain();
    expect((await h.order(orderId)).status).toBe("delivered");

    await h.engine.clock.advance(3 * day);
    await h.engine.drain();
    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Completed");

    const details = await request(h.appUrl)
      .get(`/api/orders/${orderId}`)
      .set("Authorization", `Bearer ${adminToken}`)
      .expect(200);
    expect(details.body).toMatchObject({
      id: orderId,
      status: "completed",
      lines: [{ sku: "REVIEW-1", quantity: 1 }],
      payment: { status: "captured" },
      shipment: { status: "delivered", trackingNumber: shipment?.trackingNumber },
    });
    expect(details.body.emails.map((e: { idempotencyKey: string }) => e.idempotencyKey).sort()).toEqual(
      [`review-${orderId}`, `shipped-${orderId}`].sort(),
    );
    expect(details.body.timeline.map((e: { kind: string }) => e.kind)).toContain("delivered");
  });

  it("registers exactly the configured options when Inngest syncs the app", async () => {
    const res = await fetch(`${h.appUrl}/api/inngest`, {
      method: "PUT",
      headers: { "content-type": "application/json", "x-inngest-sync-kind": "in_band" },
      body: JSON.stringify({ url: `${h.appUrl}/api/inngest` }),
    });
    const synced = (await res.json()) as { app_id: string; functions: Record<string, unknown>[] };
    expect(synced.app_id).toBe("shop");
    const byId = Object.fromEntries(synced.functions.map((fn) => [fn.id, fn]));
    expect(Object.keys(byId).sort()).toEqual([
      "shop-alert-expiring-authorizations",
      "shop-check-stock-ledger",
      "shop-cleanup-cancelled-order",
      "shop-cleanup-cancelled-return",
      "shop-deliver-alert-group",
      "shop-deliver-ops-alerts",
      "shop-deliver-webhook",
      "shop-drain-email-outbox",
      "shop-fulfill-order",
      "shop-fulfill-order-failure",
      "shop-process-return",
      "shop-process-return-failure",
      "shop-reconcile-daily",
      "shop-recover-stalled-orders",
      "shop-recover-stalled-returns",
      "shop-send-held-back-emails",
      "shop-sweep-missed-webhooks",
      "shop-sweep-stale-checkouts",
      "shop-track-label-refund",
      "shop-watch-low-stock",
    ]);

    const fulfil = byId["shop-fulfill-order"] as Record<string, unknown>;
    expect(fulfil.triggers).toEqual([{ event: "shop/order.placed" }]);
    expect(fulfil.idempotency).toBe("event.data.fulfilmentKey");
    expect(fulfil.concurrency).toEqual([{ limit: 1, key: "event.data.customerId" }]);
    expect(fulfil.cancel).toEqual([
      { event: "shop/order.cancelled", if: "async.data.orderId == event.data.orderId", timeout: "1h" },
    ]);
    expect((fulfil.steps as { step: { retries: { attempts: number } } }).step.retries).toEqual({
      attempts: 5,
    });

    const processReturn = byId["shop-process-return"] as Record<string, unknown>;
    expect(processReturn.triggers).toEqual([{ event: "shop/return.requested" }]);
    expect(processReturn.idempotency).toBe("event.data.returnId");
    expect(processReturn.cancel).toEqual([
      { event: "shop/return.cancelled", if: "async.data.returnId == event.data.returnId" },
    ]);
    expect(byId["shop-cleanup-cancelled-return"]?.triggers).toEqual([
      { event: "inngest/function.cancelled", expression: "event.data.function_id == 'shop-process-return'" },
    ]);

    // One run per webhook delivery (docs/webhooks.md): endpoints do not wait for each other.
    const deliverWebhook = byId["shop-deliver-webhook"] as Record<string, unknown>;
    expect(deliverWebhook.triggers).toEqual([{ event: "shop/webhook.delivery-requested" }]);
    expect(deliverWebhook.concurrency).toEqual([{ limit: 5, key: "event.data.endpointId" }]);

    const failure = byId["shop-fulfill-order-failure"] as Record<string, unknown>;
    expect(failure.triggers).toEqual([
      { event: "inngest/function.failed", expression: "event.data.function_id == 'shop-fulfill-order'" },
    ]);
    expect(byId["shop-recover-stalled-orders"]?.triggers).toEqual([{ cron: "50 */2 * * *" }]);
    expect(byId["shop-recover-stalled-returns"]?.triggers).toEqual([{ cron: "40 */2 * * *" }]);
    expect(byId["shop-sweep-missed-webhooks"]?.triggers).toEqual([{ cron: "5 */2 * * *" }]);
    expect(byId["shop-sweep-stale-checkouts"]?.triggers).toEqual([{ cron: "35 */6 * * *" }]);
    expect(byId["shop-alert-expiring-authorizations"]?.triggers).toEqual([{ cron: "45 */6 * * *" }]);
    expect(byId["shop-reconcile-daily"]?.triggers).toEqual([{ cron: "20 */3 * * *" }]);
    // The every-minute crons are slow safety nets; their work is started by events.
    expect(byId["shop-drain-email-outbox"]?.triggers).toEqual([{ cron: "7 */6 * * *" }]);
    expect(byId["shop-deliver-ops-alerts"]?.triggers).toEqual([{ cron: "11 */6 * * *" }]);
    expect(byId["shop-watch-low-stock"]?.triggers).toEqual([
      { event: "shop/stock.low" },
      { cron: "23 5 * * *" },
    ]);
    expect(byId["shop-send-held-back-emails"]).toMatchObject({
      triggers: [{ event: "shop/email.queued" }],
      batchEvents: { maxSize: 5, timeout: "10s" },
    });
    expect(byId["shop-deliver-alert-group"]).toMatchObject({
      triggers: [{ event: "shop/ops-alert.queued" }],
      debounce: { key: "event.data.group", period: "1s", timeout: "1s" },
    });
    expect(byId["shop-check-stock-ledger"]?.triggers).toEqual([{ cron: "17 4 * * *" }]);
    const cleanup = byId["shop-cleanup-cancelled-order"] as Record<string, unknown>;
    expect(cleanup.triggers).toEqual([
      { event: "inngest/function.cancelled", expression: "event.data.function_id == 'shop-fulfill-order'" },
    ]);
  });
});
