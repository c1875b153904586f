import request from "supertest";
import { defined } from "../support/defined";
import { adminToken, testShippingAddress, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * FULFILMENT_HOLD and ops holds, through EasyPost's stand-in: a cancel inside the window buys no
 * label; after it the order ships; an ops hold keeps the label unbought until released, from the
 * admin API; and one held order does not block its customer's other orders.
 */
describe("fulfilment holds", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { FULFILMENT_HOLD: "10m" } });
  });
  afterAll(() => h.close());

  const labelsFor = (orderId: string) =>
    defined(h.easyPost)
      .shipments()
      .filter((s) => s.reference === `order-${orderId}`);
  const api = (path: string, body: object = {}) =>
    request(h.appUrl).post(path).set("Authorization", `Bearer ${adminToken}`).send(body);

  async function placedOrder(sku: string, customerId: string) {
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId,
      items: [{ sku, quantity: 1 }],
    });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: testShippingAddress } });
    const eventId = await h.placeOrder(orderId);
    return { orderId, paymentIntentId, eventId };
  }

  it("a cancel inside FULFILMENT_HOLD buys no label and takes no money", async () => {
    await h.addProduct("HOLD-1", 5);
    const { orderId, paymentIntentId, eventId } = await placedOrder("HOLD-1", "cus_hold_1");
    // The clock stands still: the run is in its window.
    await h.engine.drain();
    const held = await h.order(orderId);
    expect(held.holdReason).toBe("fulfilment_window");
    expect(held.heldAt).not.toBeNull();
    expect(h.stripeCalls("payment_intents.capture")).toHaveLength(0);

    await api(`/api/orders/${orderId}/cancel`, { reason: "changed my mind" }).expect(202);
    await h.settle();

    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Cancelled");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.holdReason).toBeNull();
    expect(labelsFor(orderId)).toHaveLength(0);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
  });

  it("after the window the order ships, one label", async () => {
    await h.addProduct("HOLD-2", 5);
    const { orderId } = await placedOrder("HOLD-2", "cus_hold_2");
    await h.engine.drain();
    expect(labelsFor(orderId)).toHaveLength(0);

    await h.settle();
    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.holdReason).toBeNull();
    expect(labelsFor(orderId)).toHaveLength(1);
    expect(order.timeline.map((e) => e.kind)).toEqual(
      expect.arrayContaining(["hold-placed", "hold-released", "shipment-booked"]),
    );
  });

  it("an ops hold keeps the label unbought past the window, shows why and since when, and its release ships the order; the customer's other order is not blocked", async () => {
    await h.addProduct("HOLD-3", 5);
    const held = await placedOrder("HOLD-3", "cus_hold_3");
    await h.engine.drain();

    const placed = await api(`/api/orders/${held.orderId}/hold`, {
      reason: "high_risk",
      note: "billing and shipping countries differ",
    }).expect(200);
    expect(placed.body).toMatchObject({ orderId: held.orderId, status: "held", reason: "high_risk" });
    await api(`/api/orders/${held.orderId}/hold`, { reason: "other" }).expect(409);

    // The same customer's next order, placed while the first is held.
    const other = await placedOrder("HOLD-3", "cus_hold_3");
    await h.settle();

    expect((await h.order(other.orderId)).status).toBe("shipped");
    expect(labelsFor(held.orderId)).toHaveLength(0);
    const details = await request(h.appUrl)
      .get(`/api/orders/${held.orderId}`)
      .set("Authorization", `Bearer ${adminToken}`)
      .expect(200);
    expect(details.body.hold).toMatchObject({
      reason: "high_risk",
      note: "billing and shipping countries differ",
      by: "admin-api",
    });
    expect(Date.parse(details.body.hold.since)).not.toBeNaN();
    expect(details.body.status).toBe("fulfilling");

    const released = await api(`/api/orders/${held.orderId}/release-hold`).expect(200);
    expect(released.body).toEqual({ orderId: held.orderId, status: "released", reason: "high_risk" });
    await h.settle(3);
    const order = await h.order(held.orderId);
    expect(order.status).toBe("shipped");
    expect(order.holdReason).toBeNull();
    expect(labelsFor(held.orderId)).toHaveLength(1);
    expect(
      order.timeline.find(
        (e) => e.kind === "hold-released" && e.detail && (e.detail as { by?: string }).by === "admin-api",
      ),
    ).toBeDefined();
  });

  it("refuses bad holds and releases with a clear error, changing nothing", async () => {
    const shipped = await h.db.order.findFirstOrThrow({ where: { status: "shipped" } });
    const bad = await api(`/api/orders/${shipped.id}/hold`, { reason: "because" }).expect(400);
    expect(bad.body.error.code).toBe("validation_failed");
    const labelled = await api(`/api/orders/${shipped.id}/hold`, { reason: "address" }).expect(409);
    expect(labelled.body.error).toMatchObject({ code: "order_not_holdable" });
    expect(labelled.body.error.message).toMatch(/already has a label/);
    const notHeld = await api(`/api/orders/${shipped.id}/release-hold`).expect(409);
    expect(notHeld.body.error.code).toBe("order_not_held");
    await api(`/api/orders/5b1f3f5e-8a4e-4f7b-9a57-2f4d9e0c1a11/hold`, { reason: "other" }).expect(404);
    expect((await h.order(shipped.id)).holdReason).toBeNull();
  });
});
