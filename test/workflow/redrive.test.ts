import request from "supertest";
import { orderPlaced } from "../../src/events/contracts";
import { eventually, gate } from "../support/eventually";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

/**
 * An order whose run failed (or stalled) can be re-driven at once through the admin API, inside Inngest's
 * 24-hour event-id and idempotency windows, and the claim still lets one run fulfil it.
 */
describe("POST /api/orders/:id/redrive", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  const redrive = (orderId: string, token = adminToken) =>
    request(h.appUrl).post(`/api/orders/${orderId}/redrive`).set("Authorization", `Bearer ${token}`).send();

  it("re-drives an order whose run failed on every attempt, at once, and fulfils it exactly once", async () => {
    await h.addProduct("REDRIVE-1", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_redrive",
      items: [{ sku: "REDRIVE-1", quantity: 2 }],
    });
    // The database refuses to record the parcel on every attempt: the run fails after the capture.
    await h.db.$executeRawUnsafe(
      `CREATE FUNCTION refuse_shipment() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'database unavailable'; END $$`,
    );
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_shipment BEFORE INSERT ON shipments FOR EACH ROW EXECUTE FUNCTION refuse_shipment()`,
    );
    let firstEvent: string;
    try {
      firstEvent = await h.placeOrder(orderId);
      await h.settle(20);
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER refuse_shipment ON shipments`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION refuse_shipment()`);
    }
    expect((await h.runsOfEvent(firstEvent))[0]?.status).toBe("Failed");
    const failed = await h.order(orderId);
    expect(failed.status).toBe("fulfilling");
    expect(failed.payment?.status).toBe("captured");

    const res = await redrive(orderId).expect(202);
    expect(res.body).toEqual({
      orderId,
      status: "redrive_requested",
      generation: 1,
      eventId: `order-placed-${orderId}-redrive-1`,
    });
    await h.engine.drain();

    const [run] = await h.runsOfEvent(`order-placed-${orderId}-redrive-1`);
    expect(run?.status).toBe("Running"); // shipped, waiting for delivery
    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.redriveGeneration).toBe(1);
    expect(await h.stockOf("REDRIVE-1")).toBe(3);
    expect(order.reservations).toHaveLength(1);
    expect(
      h
        .stripeCalls("payment_intents.capture")
        .filter((c) => c.status === 200 && !c.replayed && c.idempotencyKey === `capture-${orderId}`),
    ).toHaveLength(1);
    expect(order.emails.map((email) => email.template)).toEqual(["shipped"]);
    const kinds = order.timeline.map((entry) => entry.kind);
    expect(kinds.filter((kind) => kind === "claimed")).toHaveLength(2);
    expect(kinds).toContain("redriven");

    // Shipped: nothing left to re-drive.
    const again = await redrive(orderId).expect(409);
    expect(again.body.error.code).toBe("order_not_redrivable");
  });

  it("re-drives an order whose run is stuck in a step: the old run is superseded and changes nothing, the new one fulfils it", async () => {
    await h.addProduct("REDRIVE-2", 5);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_stuck",
      items: [{ sku: "REDRIVE-2", quantity: 1 }],
    });
    const answer = gate();
    h.sandbox.injectFailure("payment_intents.capture", {
      kind: "hang",
      afterProcessing: true,
      until: answer.promise,
    });
    const firstEvent = await h.placeOrder(orderId);
    await eventually(
      "captured at Stripe",
      () => h.sandbox.paymentIntent(paymentIntentId)?.status === "succeeded",
    );

    // Within Inngest's 24-hour windows for the first event's id and idempotency key.
    await redrive(orderId).expect(202);
    answer.open();
    await h.engine.drain();

    const [stuck] = await h.runsOfEvent(firstEvent);
    expect(stuck).toMatchObject({ status: "Completed", output: { orderId, stopped: "superseded" } });
    const [fresh] = await h.runsOfEvent(`order-placed-${orderId}-redrive-1`);
    expect(fresh?.status).toBe("Running"); // shipped, waiting for delivery
    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.payment).toMatchObject({ status: "captured", amountCaptured: 2500 });
    expect(await h.stockOf("REDRIVE-2")).toBe(4);
    expect(order.reservations).toHaveLength(1);
    expect(order.emails.map((email) => email.template)).toEqual(["shipped"]);
    expect(
      h.stripeCalls("refunds.create").filter((c) => c.params.payment_intent === paymentIntentId),
    ).toHaveLength(0);
    const captured = order.timeline.filter((entry) => entry.kind === "payment-captured");
    expect(captured.map((entry) => entry.runId)).toEqual([fresh?.run_id]);
  });

  it("keeps Inngest's idempotency on the key: a second event with another id but the same fulfilmentKey starts no run", async () => {
    await h.addProduct("REDRIVE-4", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_same_key",
      items: [{ sku: "REDRIVE-4", quantity: 1 }],
    });
    const first = await h.placeOrder(orderId);
    await h.engine.drain();
    const order = await h.db.order.findUniqueOrThrow({ where: { id: orderId } });
    // The key travels in clear next to the encrypted customer fields, so Inngest can read it.
    const again = orderPlaced.create({
      orderId,
      customerId: order.customerId,
      email: order.email,
      total: order.total,
      currency: order.currency,
      paymentIntentId: order.paymentIntentId,
      fulfilmentKey: orderId,
    });
    await h.send(again.name, again.data, `another-id-${orderId}`);
    await h.engine.drain();

    expect(await h.runsOfEvent(first)).toHaveLength(1);
    expect(await h.runsOfEvent(`another-id-${orderId}`)).toHaveLength(0);
  });

  it("answers 409 for a cancelled order, 404 for an unknown one and 401 without the token", async () => {
    await h.addProduct("REDRIVE-3", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_redrive_cancel",
      items: [{ sku: "REDRIVE-3", quantity: 1 }],
    });
    await request(h.appUrl)
      .post(`/api/orders/${orderId}/cancel`)
      .set("Authorization", `Bearer ${adminToken}`)
      .send({})
      .expect(202);
    const res = await redrive(orderId).expect(409);
    expect(res.body.error.code).toBe("order_not_redrivable");
    expect((await h.order(orderId)).redriveGeneration).toBe(0);

    const unknown = await redrive("5b1f3f5e-8a4e-4f7b-9a57-2f4d9e0c1a11").expect(404);
    expect(unknown.body.error.code).toBe("order_not_found");
    await redrive(orderId, "wrong-token").expect(401);
  });

  it("re-drives an order whose run failed after booking (the review request) from where it failed: no second label, no second charge", async () => {
    await h.addProduct("REDRIVE-BOOKED", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_redrive_booked",
      items: [{ sku: "REDRIVE-BOOKED", quantity: 1 }],
    });
    const firstEvent = await h.placeOrder(orderId);
    await h.settle(2);
    const shipped = await h.order(orderId);
    expect(shipped.status).toBe("shipped");
    // Still waiting for the delivery: a re-drive now would start a second run beside it.
    expect((await redrive(orderId).expect(409)).body.error.code).toBe("order_not_redrivable");

    // The database refuses to complete the order on every attempt: the run fails after the delivery
    // (which the carrier webhook marks itself: decision 0195), at send-review-request.
    await h.db.$executeRawUnsafe(
      `CREATE FUNCTION refuse_delivered() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.status = 'completed' THEN RAISE EXCEPTION 'database unavailable'; END IF; RETURN NEW; END $$`,
    );
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_delivered BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION refuse_delivered()`,
    );
    try {
      const { delivery } = await h.easyPost.advanceTracker(
        shipped.shipment?.trackingNumber ?? "",
        "delivered",
      );
      expect(delivery?.responseStatus).toBe(200);
      await h.settle(2);
      expect((await h.order(orderId)).status).toBe("delivered");
      await h.engine.clock.advance(3 * 24 * 3600 * 1000 + 60_000);
      await h.settle(20);
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER refuse_delivered ON orders`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION refuse_delivered()`);
    }
    expect((await h.runsOfEvent(firstEvent))[0]?.status).toBe("Failed");
    expect((await h.order(orderId)).status).toBe("delivered");

    const res = await redrive(orderId).expect(202);
    expect(res.body).toMatchObject({ orderId, status: "redrive_requested", generation: 1 });
    await h.settle(2);
    await h.engine.clock.advance(4 * 24 * 3600 * 1000);
    await h.settle(2);

    const [run] = await h.runsOfEvent(`order-placed-${orderId}-redrive-1`);
    expect(run?.status).toBe("Completed");
    const order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(order.shipment?.trackingNumber).toBe(shipped.shipment?.trackingNumber);
    expect(await h.db.shipment.count({ where: { orderId } })).toBe(1);
    expect(
      h
        .stripeCalls("payment_intents.capture")
        .filter((c) => c.status === 200 && !c.replayed && c.idempotencyKey === `capture-${orderId}`),
    ).toHaveLength(1);
    expect(order.emails.map((email) => email.template).sort()).toEqual(["reviewRequest", "shipped"]);
    const steps = (await h.run(run?.run_id ?? "")).steps?.map((step) => step.name ?? step.id) ?? [];
    expect(steps).toEqual(expect.arrayContaining(["claim", "find-booking", "mark-delivered"]));
    expect(steps).not.toContain("charge-card");
    expect(steps).not.toContain("create-shipment");
    expect(await h.stockOf("REDRIVE-BOOKED")).toBe(4);
  });
});
