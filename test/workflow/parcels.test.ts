import request from "supertest";
import { defined } from "../support/defined";
import { adminToken, testShippingAddress, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * An order in several parcels, through EasyPost's stand-in driven by @easypost/api: a product
 * that ships alone and a packed parcel under SHIPPING_MAX_PARCEL_WEIGHT_OZ, each its own label
 * and tracker; the order delivered (and the review asked, once) only when the last parcel is;
 * a cancel before the first scan hands every label back; a re-ship replaces one parcel's label.
 */
describe("several parcels per order", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { SHIPPING_MAX_PARCEL_WEIGHT_OZ: "40" } });
    await h.addProduct("PAR-BIKE", 20, 30000);
    await h.addProduct("PAR-MUG", 50, 1500);
    await h.db.product.update({ where: { sku: "PAR-BIKE" }, data: { shipsAlone: true, weightOz: 480 } });
    await h.db.product.update({ where: { sku: "PAR-MUG" }, data: { weightOz: 12 } });
  });
  afterAll(() => h.close());

  const easyPost = () => defined(h.easyPost);
  const labelsOf = (orderId: string) =>
    easyPost()
      .purchased()
      .filter((s) => s.reference?.startsWith(`order-${orderId}`));
  const api = (path: string) =>
    request(h.appUrl).post(path).set("Authorization", `Bearer ${adminToken}`).send({});

  /** A bike (alone) and four 12 oz mugs (48 oz: over 40, so two packed parcels): three parcels. */
  async function threeParcelOrder(customerId: string) {
    const { orderId } = await h.createPaidOrder({
      customerId,
      items: [
        { sku: "PAR-BIKE", quantity: 1 },
        { sku: "PAR-MUG", quantity: 4 },
      ],
    });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: testShippingAddress } });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("shipped");
    return { orderId, eventId };
  }

  /** One bike and one mug: two parcels (the bike alone, the mug). */
  async function twoParcelOrder(customerId: string) {
    const { orderId } = await h.createPaidOrder({
      customerId,
      items: [
        { sku: "PAR-BIKE", quantity: 1 },
        { sku: "PAR-MUG", quantity: 1 },
      ],
    });
    await h.db.order.update({ where: { id: orderId }, data: { shippingAddress: testShippingAddress } });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);
    expect((await h.order(orderId)).status).toBe("shipped");
    return { orderId, eventId };
  }

  it("splits deterministically: a label and a tracker per parcel, one e-mail listing them all", async () => {
    const { orderId } = await threeParcelOrder("cus_parcels_split");
    const order = await h.order(orderId);
    expect(order.shipments.map((s) => [s.parcelNumber, s.lines])).toEqual([
      [1, [{ sku: "PAR-MUG", quantity: 3 }]],
      [2, [{ sku: "PAR-MUG", quantity: 1 }]],
      [3, [{ sku: "PAR-BIKE", quantity: 1 }]],
    ]);
    const labels = labelsOf(orderId);
    expect(labels.map((s) => s.reference).sort()).toEqual(
      [`order-${orderId}`, `order-${orderId}-2`, `order-${orderId}-3`].sort(),
    );
    expect(labels.map((s) => s.parcel.weight).sort((a, b) => a - b)).toEqual([12, 36, 480]);
    for (const label of labels) expect(label.tracker?.tracking_code).toBe(label.tracking_code);
    expect(new Set(order.shipments.map((s) => s.trackingNumber)).size).toBe(3);

    const mails = h.mailsTo(/on its way/).filter((m) => m.messageId === `<shipped-${orderId}@shop.example>`);
    expect(mails).toHaveLength(1);
    for (const shipment of order.shipments) expect(mails[0]?.text).toContain(shipment.trackingNumber);
    expect(mails[0]?.text).toContain("3 parcels");

    // The customer's order page (signed link) lists every parcel with its tracking link.
    const link = new URL(h.services.links.order(orderId));
    const page = await request(h.appUrl).get(`${link.pathname}${link.search}`).expect(200);
    expect(page.text).toContain("Shipped in 3 parcels");
    for (const shipment of order.shipments) {
      expect(page.text).toContain(shipment.trackingNumber);
      expect(page.text).toContain(`/track/${shipment.trackingNumber}`);
    }
  });

  it("two parcels: delivered only when both are, the review sent once; repeated tracker events change nothing", async () => {
    const { orderId, eventId } = await twoParcelOrder("cus_parcels_deliver");
    const labels = labelsOf(orderId);
    expect(labels).toHaveLength(2);
    const [first, second] = (await h.order(orderId)).shipments;
    const reviewsBefore = h.mailsTo(/How was your order/).length;

    // Parcel 1 arrives: the order is not delivered, nothing asks for a review.
    await easyPost().advanceTracker(defined(first).trackingNumber, "in_transit");
    await easyPost().advanceTracker(defined(first).trackingNumber, "delivered");
    // EasyPost repeats an event it thinks we missed.
    await easyPost().advanceTracker(defined(first).trackingNumber, "delivered");
    await h.settle(3);
    await h.engine.clock.advance(4 * 24 * 3600 * 1000);
    await h.settle(2);
    let order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.shipments.map((s) => s.status)).toEqual(["delivered", "booked"]);
    expect(order.timeline.filter((e) => e.kind === "parcel-delivered")).toHaveLength(1);
    expect(h.mailsTo(/How was your order/).length).toBe(reviewsBefore);
    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Running");

    // The last parcel arrives: delivered, and after REVIEW_AFTER_DELIVERY one review request.
    await easyPost().advanceTracker(defined(second).trackingNumber, "delivered");
    await h.engine.drain();
    expect((await h.order(orderId)).status).toBe("delivered");
    await easyPost().advanceTracker(defined(second).trackingNumber, "delivered");
    await h.engine.clock.advance(3 * 24 * 3600 * 1000);
    await h.settle(2);
    order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(h.mailsTo(/How was your order/).length).toBe(reviewsBefore + 1);
    expect(order.emails.filter((e) => e.template === "reviewRequest")).toHaveLength(1);
    expect(order.timeline.filter((e) => e.kind === "delivered")).toHaveLength(1);
    expect(order.timeline.filter((e) => e.kind === "review-requested")).toHaveLength(1);
    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Completed");
    expect(labelsOf(orderId)).toHaveLength(2);
  });

  it("a re-drive after booking resumes with both parcels: nothing bought or charged again, delivered from the record", async () => {
    const { orderId, eventId } = await twoParcelOrder("cus_parcels_redrive");
    const shipped = await h.order(orderId);
    // The database refuses to complete the order on every attempt: the run fails after the delivery,
    // at send-review-request (the carrier webhook marks the order delivered: decision 0195).
    await h.db.$executeRawUnsafe(
      `CREATE FUNCTION refuse_parcels_delivered() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.status = 'completed' THEN RAISE EXCEPTION 'database unavailable'; END IF; RETURN NEW; END $$`,
    );
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_parcels_delivered BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION refuse_parcels_delivered()`,
    );
    try {
      for (const parcel of shipped.shipments)
        await easyPost().advanceTracker(parcel.trackingNumber, "delivered");
      await h.settle(2);
      expect((await h.order(orderId)).status).toBe("delivered");
      await h.engine.clock.advance(3 * 24 * 3600 * 1000 + 60_000);
      await h.settle(20);
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER refuse_parcels_delivered ON orders`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION refuse_parcels_delivered()`);
    }
    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Failed");

    await api(`/api/orders/${orderId}/redrive`).expect(202);
    await h.settle(2);
    await h.engine.clock.advance(4 * 24 * 3600 * 1000);
    await h.settle(2);
    const [run] = await h.runsOfEvent(`order-placed-${orderId}-redrive-1`);
    expect(run?.status).toBe("Completed");
    const order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(order.shipments.map((s) => s.trackingNumber)).toEqual(
      shipped.shipments.map((s) => s.trackingNumber),
    );
    expect(labelsOf(orderId)).toHaveLength(2);
    expect(order.emails.map((email) => email.template).sort()).toEqual(["reviewRequest", "shipped"]);
  });

  it("a cancel before the first scan hands both labels back", async () => {
    const { orderId } = await twoParcelOrder("cus_parcels_cancel");
    const refundsBefore = easyPost().requests.filter((r) => r.endpoint === "shipments.refund").length;
    await api(`/api/orders/${orderId}/cancel`).expect(202);
    await h.settle(2);

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.shipments.map((s) => s.labelRefundStatus)).toEqual(["submitted", "submitted"]);
    expect(labelsOf(orderId).map((s) => s.refund_status)).toEqual(["submitted", "submitted"]);
    expect(
      easyPost().requests.filter((r) => r.endpoint === "shipments.refund" && r.status === 200).length -
        refundsBefore,
    ).toBe(2);
    expect(order.timeline.filter((e) => e.kind === "label-refund-requested")).toHaveLength(2);
    expect(order.payment?.status).toBe("refunded");
  });

  it("re-ship through the API: one new label, the old one's refund asked, one new tracking e-mail, however often it is asked", async () => {
    const { orderId, eventId } = await twoParcelOrder("cus_parcels_reship");
    const [, second] = (await h.order(orderId)).shipments;
    const old = defined(second);
    const reship = () => api(`/api/orders/${orderId}/shipments/${old.id}/reship`);

    const made = await reship().expect(201);
    expect(made.body).toMatchObject({
      orderId,
      status: "reshipped",
      parcelNumber: 2,
      replacedShipmentId: old.id,
      oldLabel: "requested",
      repeated: false,
    });
    const again = await reship().expect(200);
    expect(again.body).toMatchObject({ shipmentId: made.body.shipmentId, repeated: true });

    const labels = labelsOf(orderId);
    expect(labels).toHaveLength(3);
    expect(labels.filter((s) => s.reference === `order-${orderId}-2-reship-1`)).toHaveLength(1);
    expect(labels.find((s) => s.id === old.providerId)?.refund_status).toBe("submitted");
    const newMails = h
      .mailsTo(/A new parcel for your order/)
      .filter((m) => m.text?.includes(made.body.trackingNumber));
    expect(newMails).toHaveLength(1);

    const order = await h.order(orderId);
    expect(order.shipments.map((s) => [s.parcelNumber, s.generation, s.supersededAt !== null])).toEqual([
      [1, 0, false],
      [2, 0, true],
      [2, 1, false],
    ]);
    expect(order.timeline.filter((e) => e.kind === "parcel-reshipped")).toHaveLength(1);
    // Every label's cost is on its row, the re-ship's too: what EasyPost charged for the rate bought.
    const costOf = (providerId: string | null) => {
      const rate = labels.find((s) => s.id === providerId)?.selected_rate?.rate;
      return rate ? Math.round(Number(rate) * 100) : Number.NaN;
    };
    expect(order.shipments.map((s) => [s.labelCost, s.labelCurrency])).toEqual(
      order.shipments.map((s) => [costOf(s.providerId), "usd"]),
    );

    // The replaced label's delivery (back to us) counts for nothing; the new one's does.
    const [first] = order.shipments;
    await easyPost().advanceTracker(old.trackingNumber, "delivered");
    await easyPost().advanceTracker(defined(first).trackingNumber, "delivered");
    await h.engine.drain();
    expect((await h.order(orderId)).status).toBe("shipped");
    await easyPost().advanceTracker(made.body.trackingNumber, "delivered");
    await h.engine.drain();
    expect((await h.order(orderId)).status).toBe("delivered");
    expect((await h.runsOfEvent(eventId))[0]?.status).not.toBe("Failed");

    // A delivered parcel, an unknown shipment, an order not shipped: refused, nothing bought.
    const purchased = easyPost().purchased().length;
    const refused = await api(`/api/orders/${orderId}/shipments/${made.body.shipmentId}/reship`).expect(409);
    expect(refused.body.error.code).toMatch(/order_not_shipped|parcel_delivered/);
    const unknown = await api(
      `/api/orders/${orderId}/shipments/00000000-0000-4000-8000-000000000001/reship`,
    ).expect(404);
    expect(unknown.body.error.code).toBe("shipment_not_found");
    await api(`/api/orders/${orderId}/shipments/not-a-uuid/reship`).expect(404);
    expect(easyPost().purchased().length).toBe(purchased);
  });

  it("re-ship of a parcel on its way back (scanned): the new label bought, the old one not voided and ops told, once", async () => {
    const { orderId } = await twoParcelOrder("cus_parcels_reship_returned");
    const [first] = (await h.order(orderId)).shipments;
    const old = defined(first);
    await easyPost().advanceTracker(old.trackingNumber, "in_transit");
    await easyPost().advanceTracker(old.trackingNumber, "return_to_sender");
    await h.engine.drain();
    const alertsBefore = h.slack.bodies.length;
    const refundsBefore = easyPost().requests.filter((r) => r.endpoint === "shipments.refund").length;

    const made = await api(`/api/orders/${orderId}/shipments/${old.id}/reship`).expect(201);
    expect(made.body).toMatchObject({ parcelNumber: 1, oldLabel: "needs-ops", repeated: false });
    const again = await api(`/api/orders/${orderId}/shipments/${old.id}/reship`).expect(200);
    expect(again.body).toMatchObject({ shipmentId: made.body.shipmentId, repeated: true });
    await h.engine.drain();

    expect(easyPost().requests.filter((r) => r.endpoint === "shipments.refund").length).toBe(refundsBefore);
    expect(labelsOf(orderId).filter((s) => s.reference === `order-${orderId}-1-reship-1`)).toHaveLength(1);
    const order = await h.order(orderId);
    expect(order.timeline.filter((e) => e.kind === "label-not-voided")).toHaveLength(1);
    expect(order.attentionReason).toMatch(/re-shipped after the carrier scanned the parcel/);
    expect(h.slack.bodies.length).toBe(alertsBefore + 1);
    expect(order.emails.filter((e) => e.idempotencyKey === `reshipped-${made.body.shipmentId}`)).toHaveLength(
      1,
    );
  });

  it("re-ship refuses a parcel already delivered while the order is still on its way", async () => {
    const { orderId } = await twoParcelOrder("cus_parcels_reship_delivered");
    const [first] = (await h.order(orderId)).shipments;
    await easyPost().advanceTracker(defined(first).trackingNumber, "delivered");
    const purchased = easyPost().purchased().length;
    const refused = await api(`/api/orders/${orderId}/shipments/${defined(first).id}/reship`).expect(409);
    expect(refused.body.error).toMatchObject({ code: "parcel_delivered", message: expect.any(String) });
    expect(easyPost().purchased().length).toBe(purchased);
    expect((await h.order(orderId)).shipments).toHaveLength(2);
  });
});
