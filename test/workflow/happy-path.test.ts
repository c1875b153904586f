import { shipmentDelivered } from "../../src/events/contracts";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

describe("fulfill-order: the happy path", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("HAPPY-1", 10, 2500);
  });
  afterAll(() => h.close());

  it("reserves, captures once, ships once, confirms once, then asks for a review after delivery", async () => {
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      items: [{ sku: "HAPPY-1", quantity: 2 }],
    });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Running"); // waiting for the delivery event
    let order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(await h.stockOf("HAPPY-1")).toBe(8);
    expect(order.payment).toMatchObject({
      status: "captured",
      amountCaptured: 5000,
      providerId: paymentIntentId,
    });
    expect(order.shipment).toMatchObject({ carrier: expect.any(String), status: "booked" });
    const captures = h.stripeCalls("payment_intents.capture");
    expect(captures).toHaveLength(1);
    expect(captures[0]?.idempotencyKey).toBe(`capture-${orderId}`);
    const shippedMails = h.mailsTo(/on its way/);
    expect(shippedMails).toHaveLength(1);
    // The e-mail links the shop's own tracking page, which follows EasyPost's tracker.
    expect(shippedMails[0]?.text).toContain(`http://shop.test/track/${order.shipment?.trackingNumber}`);
    expect(shippedMails[0]?.messageId).toBe(`<shipped-${orderId}@shop.example>`);

    const delivered = shipmentDelivered.create({
      orderId,
      trackingNumber: order.shipment?.trackingNumber ?? "",
      deliveredAt: new Date().toISOString(),
    });
    await h.send(delivered.name, delivered.data);
    await h.engine.drain();
    expect((await h.order(orderId)).status).toBe("delivered");
    expect(h.mailsTo(/How was your order/)).toHaveLength(0);

    await h.engine.clock.advance(3 * 24 * 3600 * 1000);
    await h.engine.drain();

    const [finished] = await h.runsOfEvent(eventId);
    expect(finished).toMatchObject({
      status: "Completed",
      output: { orderId, paymentId: order.payment?.id, trackingNumber: order.shipment?.trackingNumber },
    });
    order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(h.mailsTo(/How was your order/)).toHaveLength(1);
    expect(order.timeline.map((entry) => entry.kind)).toEqual([
      "claimed",
      "stock-reserved",
      "payment-captured",
      "shipment-booked",
      "confirmation-sent",
      "delivered",
      "review-requested",
    ]);
    expect(new Set(order.timeline.map((entry) => entry.runId))).toEqual(new Set([finished?.run_id]));
  });
});

describe("fulfill-order: an event that overtakes the payment's commit", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("RACE-1", 10);
  });
  afterAll(() => h.close());

  it("retries the claim until the order is paid instead of skipping it", async () => {
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "RACE-1", quantity: 1 }] });
    await h.db.order.update({ where: { id: orderId }, data: { status: "pending" } });
    const eventId = await h.placeOrder(orderId);
    await h.engine.drain();
    expect((await h.order(orderId)).claimId).toBeNull();

    await h.db.order.update({ where: { id: orderId }, data: { status: "authorized" } });
    await h.settle(3);

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Running");
    expect((await h.order(orderId)).status).toBe("shipped");
  });
});
