import request from "supertest";
import { labelRefundRequested, orderCancelled } from "../../src/events/contracts";
import { defined } from "../support/defined";
import { adminToken, testShippingAddress, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * A bought label handed back to EasyPost (its stand-in, driven by @easypost/api): a cancel or a
 * full refund after booking and before the first scan asks for the label refund and ends the
 * order; after the first scan ops are told and nothing is voided.
 */
describe("label void through EasyPost", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { LABEL_REFUND_CHECK_EVERY: "1m" } });
  });
  afterAll(() => h.close());

  const easyPost = () => defined(h.easyPost);
  const labelOf = (orderId: string) =>
    easyPost()
      .shipments()
      .find((s) => s.reference === `order-${orderId}`);

  async function shippedOrder(sku: string, customerId: string) {
    await h.addProduct(sku, 5);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId,
      items: [{ sku, quantity: 1 }],
    });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: testShippingAddress } });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("shipped");
    expect(labelOf(orderId)?.postage_label).not.toBeNull();
    return { orderId, paymentIntentId, eventId };
  }

  const cancel = (orderId: string) =>
    request(h.appUrl)
      .post(`/api/orders/${orderId}/cancel`)
      .set("Authorization", `Bearer ${adminToken}`)
      .send({ reason: "ordered the wrong size" });

  it("a cancel after the label is bought, before the first scan: refunded, cancelled, the label refund submitted then refunded", async () => {
    const { orderId, paymentIntentId, eventId } = await shippedOrder("VOID-1", "cus_void_1");
    const stock = await h.stockOf("VOID-1");

    await cancel(orderId).expect(202);
    await h.settle(2);

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    // Captured when the parcel was booked, so the money goes back as a refund.
    expect(h.stripeCalls("refunds.create").filter((c) => c.status === 200)).toHaveLength(1);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("succeeded");
    expect(order.payment?.status).toBe("refunded");
    expect(await h.stockOf("VOID-1")).toBe(stock + 1);
    // EasyPost was asked once, through the client's Shipment.refund, and says submitted.
    expect(
      easyPost().requests.filter((r) => r.endpoint === "shipments.refund" && r.status === 200),
    ).toHaveLength(1);
    expect(labelOf(orderId)?.refund_status).toBe("submitted");
    expect(order.shipment?.labelRefundStatus).toBe("submitted");
    expect(order.timeline.find((e) => e.kind === "label-refund-requested")?.detail).toMatchObject({
      cause: "cancelled",
      status: "submitted",
    });
    expect(h.mailsTo(/has been cancelled/)).toHaveLength(1);

    // The carrier processes it later; the tracking run sees it on its next look.
    await easyPost().settleLabelRefund(`order-${orderId}`);
    await h.settle(3);
    const after = await h.order(orderId);
    expect(after.shipment?.labelRefundStatus).toBe("refunded");
    expect(after.timeline.filter((e) => e.kind === "label-refunded")).toHaveLength(1);
    expect(after.attentionReason).toBeNull();
  });

  it("after the first scan: the cancel answers 409; a cancel that reaches the run anyway tells ops once and voids nothing", async () => {
    const { orderId, eventId } = await shippedOrder("VOID-2", "cus_void_2");
    await easyPost().advanceTracker(`order-${orderId}`, "in_transit");
    expect((await h.order(orderId)).shipment?.trackerStatus).toBe("in_transit");

    const refused = await cancel(orderId).expect(409);
    expect(refused.body.error.code).toBe("order_not_cancellable");

    const slackBefore = h.slack.bodies.length;
    const event = orderCancelled.create({ orderId });
    await h.send(event.name, event.data);
    await h.settle(2);

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.payment?.status).toBe("captured");
    expect(order.attentionReason).toMatch(/scanned/);
    const label = defined(labelOf(orderId));
    expect(
      easyPost().requests.filter((r) => r.endpoint === "shipments.refund" && r.path.includes(label.id)),
    ).toHaveLength(0);
    expect(labelOf(orderId)?.refund_status).toBeNull();
    expect(order.timeline.map((e) => e.kind)).toEqual(
      expect.arrayContaining(["label-not-voided", "cancel-needs-ops"]),
    );
    expect(h.slack.bodies.length).toBe(slackBefore + 1);
    expect(JSON.stringify(h.slack.bodies.at(-1))).toMatch(/intercept the parcel or return it to sender/);
  });

  it("a full refund of a shipped order hands its unscanned label back; a rejected refund goes to ops", async () => {
    const { orderId } = await shippedOrder("VOID-3", "cus_void_3");
    const before = easyPost().requests.filter((r) => r.endpoint === "shipments.refund").length;

    await request(h.appUrl)
      .post(`/api/orders/${orderId}/refund`)
      .set("Authorization", `Bearer ${adminToken}`)
      .send({ reason: "customer returned it unopened" })
      .expect(201);
    expect(easyPost().requests.filter((r) => r.endpoint === "shipments.refund").length).toBe(before + 1);
    expect(labelOf(orderId)?.refund_status).toBe("submitted");
    const refunded = await h.order(orderId);
    expect(refunded.shipment?.labelRefundStatus).toBe("submitted");
    expect(refunded.timeline.find((e) => e.kind === "label-refund-requested")?.detail).toMatchObject({
      cause: "refunded",
    });

    const slackBefore = h.slack.bodies.length;
    await easyPost().settleLabelRefund(`order-${orderId}`, "rejected");
    await h.settle(3);
    const order = await h.order(orderId);
    expect(order.shipment?.labelRefundStatus).toBe("rejected");
    expect(order.timeline.filter((e) => e.kind === "label-refund-rejected")).toHaveLength(1);
    expect(order.attentionReason).toMatch(/refused to refund the label/);
    expect(h.slack.bodies.length).toBe(slackBefore + 1);
  });

  it("a void whose tracking event was lost is picked up by the sweep and its refund followed exactly once", async () => {
    const { orderId } = await shippedOrder("VOID-LOST", "cus_void_lost");
    const trackingEventId = `label-refund-requested-${orderId}`;
    const tracked = async () =>
      (await h.db.shipment.findFirstOrThrow({ where: { orderId } })).labelRefundTrackedAt;
    const rescued = () =>
      h.slack.bodies
        .map((body) => JSON.stringify(body))
        .filter((body) => body.includes("Label refund was not being followed") && body.includes(orderId));
    // recover-stalled-orders fires every 2 hours.
    const sweep = async () => {
      await h.engine.clock.advance(2 * 3600_000);
      await h.settle(3);
    };

    // The process dies between recording the label's refund and publishing its event: the retried
    // cleanup finds the refund recorded and publishes nothing.
    const { publisher } = h.services;
    const publish = publisher.publish.bind(publisher);
    const lost = jest.spyOn(publisher, "publish").mockImplementation(async (event) => {
      if (event.name === labelRefundRequested.name) throw new Error("killed before the publish");
      return publish(event);
    });
    try {
      await cancel(orderId).expect(202);
      await h.settle(2);
    } finally {
      lost.mockRestore();
    }
    const cancelled = await h.order(orderId);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.shipment?.labelRefundStatus).toBe("submitted");
    expect(await h.runsOfEvent(trackingEventId)).toHaveLength(0);
    expect(await tracked()).toBeNull();

    // Younger than the grace: the sweep leaves it (its publish may still be on the way).
    await sweep();
    expect(await h.runsOfEvent(trackingEventId)).toHaveLength(0);

    await h.db.$executeRawUnsafe(
      `UPDATE shipments SET label_refund_requested_at = now() - interval '20 minutes' WHERE order_id = $1::uuid`,
      orderId,
    );
    await easyPost().settleLabelRefund(`order-${orderId}`);
    await sweep();
    expect(await h.runsOfEvent(trackingEventId)).toHaveLength(1);
    expect(await tracked()).not.toBeNull();
    await h.settle(3);
    const followed = await h.order(orderId);
    expect(followed.shipment?.labelRefundStatus).toBe("refunded");
    expect(followed.timeline.filter((e) => e.kind === "label-refunded")).toHaveLength(1);
    expect(rescued()).toHaveLength(1);
    expect(rescued()[0]).toContain(defined(followed.shipment).trackingNumber);

    // Later sweeps find it followed: no second run, no second alert.
    await sweep();
    await sweep();
    expect(await h.runsOfEvent(trackingEventId)).toHaveLength(1);
    expect((await h.order(orderId)).timeline.filter((e) => e.kind === "label-refunded")).toHaveLength(1);
    expect(rescued()).toHaveLength(1);
  });
});
