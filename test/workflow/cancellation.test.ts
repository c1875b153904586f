import request from "supertest";
import { orderCancelled } from "../../src/events/contracts";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

describe("cancellation", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  const cancel = (orderId: string, token = adminToken) =>
    request(h.appUrl)
      .post(`/api/orders/${orderId}/cancel`)
      .set("Authorization", `Bearer ${token}`)
      .send({ reason: "changed my mind" });

  it("inside the window stops the run and cleans up: stock back, authorization voided, order cancelled, customer told", async () => {
    await h.addProduct("CANCEL-1", 4);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_cancel",
      items: [{ sku: "CANCEL-1", quantity: 2 }],
    });
    // Stripe is down, so the run sits in its capture retries when the customer cancels.
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 3);
    const eventId = await h.placeOrder(orderId);
    await h.engine.drain();
    expect(await h.stockOf("CANCEL-1")).toBe(2);

    const res = await cancel(orderId).expect(202);
    expect(res.body).toEqual({ orderId, status: "cancellation_requested" });
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(await h.stockOf("CANCEL-1")).toBe(4);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(h.stripeCalls("payment_intents.capture").filter((c) => c.status === 200)).toHaveLength(0);
    expect(h.mailsTo(/has been cancelled/)).toHaveLength(1);
    expect(order.timeline.map((e) => e.kind)).toEqual(
      expect.arrayContaining([
        "claimed",
        "stock-reserved",
        "stock-released",
        "authorization-voided",
        "cancelled",
      ]),
    );
    // The reason given is on the timeline, and after the void the payment still says
    // what was authorised.
    expect(order.timeline.find((e) => e.kind === "cancel-requested")?.detail).toEqual({
      reason: "changed my mind",
      by: "admin-api",
    });
    expect(order.payment).toMatchObject({
      status: "voided",
      amountAuthorized: order.total,
      amountCaptured: 0,
    });
  });

  it("of a pending (unpaid) order answers 409 saying it was never paid, not that it can no longer be cancelled", async () => {
    const order = await h.db.order.create({
      data: { customerId: "cus_pending", email: "p@example.com", currency: "usd", total: 500 },
    });
    const res = await cancel(order.id).expect(409);
    expect(res.body.error.code).toBe("order_not_cancellable");
    expect(res.body.error.message).toContain("has not been paid, so there is nothing to cancel yet");
    expect(res.body.error.message).not.toContain("can no longer be cancelled");
    // The session's real lifetime (CHECKOUT_SESSION_TTL, 1h by default), not Stripe's 24-hour maximum.
    expect(res.body.error.message).toContain(
      "expires on its own, 1h (CHECKOUT_SESSION_TTL) after it was opened",
    );
    expect(res.body.error.message).not.toContain("24 hours");
    expect((await h.order(order.id)).timeline).toEqual([]);
  });

  it("after the window answers 409 and changes nothing", async () => {
    await h.addProduct("LATE-1", 4);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_late",
      items: [{ sku: "LATE-1", quantity: 1 }],
    });
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 1);
    await h.placeOrder(orderId);
    await h.engine.drain();
    await h.db.order.update({
      where: { id: orderId },
      data: { placedEventSentAt: new Date(Date.now() - 2 * 3600_000) },
    });
    const before = await h.order(orderId);

    const res = await cancel(orderId).expect(409);
    expect(res.body.error.code).toBe("order_not_cancellable");
    const after = await h.order(orderId);
    expect(after.cancelRequestedAt).toBeNull();
    expect(after.status).toBe(before.status);
  });

  it("once the carrier has scanned the parcel answers 409", async () => {
    await h.addProduct("SHIPPED-1", 4);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_shipped",
      items: [{ sku: "SHIPPED-1", quantity: 1 }],
    });
    await h.placeOrder(orderId);
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("shipped");
    // Booked and unscanned, a cancel hands the label back (test/workflow/label-void.test.ts).
    await h.db.shipment.updateMany({ where: { orderId }, data: { trackerStatus: "in_transit" } });

    await cancel(orderId).expect(409);
  });

  it("answers 401 without a valid token and 404 for an unknown order", async () => {
    await cancel("5b1f3f5e-8a4e-4f7b-9a57-2f4d9e0c1a11", "wrong-token").expect(401);
    const res = await cancel("5b1f3f5e-8a4e-4f7b-9a57-2f4d9e0c1a11").expect(404);
    expect(res.body.error.code).toBe("order_not_found");
  });

  it("alerts ops instead of refunding when the run is cancelled after the carrier scanned the parcel", async () => {
    await h.addProduct("BOOKED-1", 4);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_booked",
      items: [{ sku: "BOOKED-1", quantity: 1 }],
    });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);
    await h.db.shipment.updateMany({ where: { orderId }, data: { trackerStatus: "in_transit" } });
    const slackBefore = h.slack.bodies.length;
    const refundsBefore = h.stripeCalls("refunds.create").length;

    const event = orderCancelled.create({ orderId });
    await h.send(event.name, event.data);
    await h.settle(2);

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.attentionReason).toMatch(/after the carrier scanned the parcel/);
    expect(order.payment?.status).toBe("captured");
    expect(h.stripeCalls("refunds.create").length).toBe(refundsBefore);
    expect(h.slack.bodies.length).toBe(slackBefore + 1);
    expect(JSON.stringify(h.slack.bodies.at(-1))).toContain(orderId);
    // The notice links the order's page in the ops console.
    expect(JSON.stringify(h.slack.bodies.at(-1))).toContain(`http://shop.test/ops/orders/${orderId}`);
  });

  it("stops a run that starts after the cancellation at its claim, and cleans up there", async () => {
    await h.addProduct("EARLY-1", 4);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_early",
      items: [{ sku: "EARLY-1", quantity: 1 }],
    });
    await cancel(orderId).expect(202);
    await h.settle(2);

    const eventId = await h.placeOrder(orderId);
    await h.settle(2);

    const [run] = await h.runsOfEvent(eventId);
    expect(run).toMatchObject({
      status: "Completed",
      output: { orderId, skipped: "cancelled-before-start" },
    });
    expect((await h.order(orderId)).status).toBe("cancelled");
    expect(await h.stockOf("EARLY-1")).toBe(4);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
  });

  it("a run that finds the cancel at its claim gives back the stock the checkout held, as well as the payment", async () => {
    await h.addProduct("EARLY-HELD", 4);
    const { orderId, paymentIntentId } = await h.checkoutPaidOrder({
      customerId: "cus_early_held",
      items: [{ sku: "EARLY-HELD", quantity: 3 }],
    });
    expect(await h.stockOf("EARLY-HELD")).toBe(1);
    await cancel(orderId).expect(202);
    await h.settle(2);

    const eventId = await h.placeOrder(orderId);
    // The run alone, on a clock that stays put: the stale-checkout sweep (a cron) would release
    // the hold too, but only a while after the order ended.
    await h.engine.drain();

    const [run] = await h.runsOfEvent(eventId);
    expect(run).toMatchObject({ status: "Completed", output: { skipped: "cancelled-before-start" } });
    expect(await h.stockOf("EARLY-HELD")).toBe(4);
    expect(await h.db.stockHold.findMany({ where: { orderId } })).toEqual([
      expect.objectContaining({ sku: "EARLY-HELD", quantity: 3, status: "released" }),
    ]);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.timeline.find((entry) => entry.kind === "stock-released")).toMatchObject({
      detail: { released: [{ sku: "EARLY-HELD", quantity: 3 }] },
      runId: run?.run_id,
    });
  });
});
