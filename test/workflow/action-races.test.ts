import { defined } from "../support/defined";
import { eventually, gate } from "../support/eventually";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * Ops actions raced against the workflow's outside effects (issue 37). Each test holds one
 * carrier answer open (the EasyPost stand-in's `held` answers: the label is bought, its answer is
 * still on the wire), lands an action inside that window, then lets the answer through: whatever
 * the order, no live label on a cancelled order, no held order shipped behind ops' back, one
 * answer and one trace per repeated request, a refused request writes nothing.
 */
describe("actions raced against the workflow's outside effects", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { SHIPPING_MAX_PARCEL_WEIGHT_OZ: "40" } });
    await h.addProduct("RACE-1", 100);
    await h.addProduct("RACE-BIKE", 20, 30000);
    await h.addProduct("RACE-MUG", 50, 1500);
    await h.db.product.update({ where: { sku: "RACE-BIKE" }, data: { shipsAlone: true, weightOz: 480 } });
    await h.db.product.update({ where: { sku: "RACE-MUG" }, data: { weightOz: 12 } });
  });
  afterAll(() => h.close());

  const post = (path: string, body: unknown = {}) =>
    fetch(`${h.appUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const answerOf = async (res: Response) => ({ status: res.status, body: (await res.json()) as unknown });
  const codeOf = (answer: { body: unknown }) => (answer.body as { error?: { code?: string } }).error?.code;
  const labelsOf = (orderId: string) =>
    h.easyPost.shipments().filter((s) => s.reference?.startsWith(`order-${orderId}`) && s.postage_label);
  const labelByReference = (reference: string) =>
    h.easyPost.shipments().find((s) => s.reference === reference);
  const statusOf = async (orderId: string) => (await h.order(orderId)).status;

  async function shippedOrder(customerId: string) {
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId,
      items: [{ sku: "RACE-1", quantity: 1 }],
    });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);
    expect(await statusOf(orderId)).toBe("shipped");
    return { orderId, paymentIntentId, eventId };
  }

  it("a cancel accepted while a re-ship buys its label: the new label is handed back, no 'shipped' mail after 'cancelled'", async () => {
    const { orderId } = await shippedOrder("cus_race_reship_cancel");
    const [old] = (await h.order(orderId)).shipments;
    const answer = gate();
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: answer.promise, afterProcessing: true });
    const reshipped = post(`/api/orders/${orderId}/shipments/${defined(old).id}/reship`).then(answerOf);
    const newReference = `order-${orderId}-1-reship-1`;
    await eventually("re-ship label bought", () => labelByReference(newReference)?.postage_label != null);

    expect((await post(`/api/orders/${orderId}/cancel`, { reason: "fraud" })).status).toBe(202);
    await eventually("cleanup done", async () => (await statusOf(orderId)) === "cancelled");
    answer.open();
    const reship = await reshipped;
    await h.settle(2);

    expect(reship.status).toBe(409);
    expect(codeOf(reship)).toBe("order_not_shipped");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    // Every label the carrier sold for this order is handed back: the old one by the cleanup,
    // the re-ship's by the re-ship itself.
    expect(labelsOf(orderId).map((s) => [s.reference, s.refund_status])).toEqual(
      expect.arrayContaining([
        [`order-${orderId}`, "submitted"],
        [newReference, "submitted"],
      ]),
    );
    expect(labelsOf(orderId).every((s) => s.refund_status === "submitted")).toBe(true);
    const templates = order.emails.map((email) => email.template);
    expect(templates).not.toContain("reshipped");
    expect(templates.filter((t) => t === "orderCancelled")).toHaveLength(1);
    expect(order.timeline.map((e) => e.kind)).not.toContain("parcel-reshipped");
  });

  it("a re-drive and a cancel while the label is bought: the late label is handed back (guard said superseded)", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_race_redrive_cancel",
      items: [{ sku: "RACE-1", quantity: 1 }],
    });
    const answer = gate();
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: answer.promise, afterProcessing: true });
    await h.placeOrder(orderId);
    await eventually("label bought", () => labelByReference(`order-${orderId}`)?.postage_label != null);

    // The new run waits behind the customer's concurrency slot (the old run's step holds it).
    expect((await post(`/api/orders/${orderId}/redrive`)).status).toBe(202);
    expect((await post(`/api/orders/${orderId}/cancel`)).status).toBe(202);
    await eventually("cleanup done", async () => (await statusOf(orderId)) === "cancelled");
    answer.open();
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.shipment).toBeNull();
    expect(labelByReference(`order-${orderId}`)?.refund_status).toBe("submitted");
    expect(order.timeline.map((e) => e.kind)).toContain("shipment-voided");
    expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
  });

  it("a label kept for a re-drive's run is handed back by the cleanup when the order is cancelled before that run records it", async () => {
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_race_kept_label",
      items: [{ sku: "RACE-1", quantity: 1 }],
    });
    const answer = gate();
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: answer.promise, afterProcessing: true });
    await h.placeOrder(orderId);
    await eventually("label bought", () => labelByReference(`order-${orderId}`)?.postage_label != null);
    // The re-drive's run finds the kept label by the shipment id recorded before the buy (decision
    // 0185): its look-up is held, so the cancel lands before that run can record the label. (A gate
    // on Stripe's capture does not hold it: the payment is captured already, and the run goes on.)
    const lookup = gate();
    h.easyPost.injectFailure("shipments.retrieve", { kind: "held", until: lookup.promise });
    try {
      expect((await post(`/api/orders/${orderId}/redrive`)).status).toBe(202);
      answer.open();
      // The old run's record is refused (superseded); the order still wants the label: kept.
      await eventually("label kept for the new run", async () =>
        (await h.order(orderId)).timeline.some((e) => e.kind === "label-kept-for-redrive"),
      );

      expect((await post(`/api/orders/${orderId}/cancel`)).status).toBe(202);
      lookup.open();
      await eventually("cleanup done", async () => (await statusOf(orderId)) === "cancelled", {
        attempts: 2400,
      });
    } finally {
      // Never left held for the next test, whatever happened here.
      lookup.open();
      answer.open();
      h.sandbox.clearFailures();
      h.easyPost.clearFailures();
    }
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.shipment).toBeNull();
    expect(labelByReference(`order-${orderId}`)?.refund_status).toBe("submitted");
    expect(h.sandbox.paymentIntent(paymentIntentId)?.amount_received).toBe(2500);
    expect(order.payment?.status).toBe("refunded");
    expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
  });

  it("a hold asked while the label is bought never answers 200 for a hold that did not hold", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_race_hold",
      items: [{ sku: "RACE-1", quantity: 1 }],
    });
    const answer = gate();
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: answer.promise, afterProcessing: true });
    await h.placeOrder(orderId);
    await eventually("label bought", () => labelByReference(`order-${orderId}`)?.postage_label != null);

    // The label gate opens once the handler itself has seen the purchase in flight: its hold
    // statement (placeHold) came back empty-handed. The proxy seeing the request is too early: a
    // handler that reads the order after the label landed answers a plain 409 (no race tested).
    const holds = h.services.workflow.holds;
    const placeHold = holds.placeHold.bind(holds);
    const waited = gate();
    const spy = jest.spyOn(holds, "placeHold").mockImplementation(async (id, ...rest) => {
      const placed = await placeHold(id, ...rest);
      if (id === orderId && placed === null) waited.open();
      return placed;
    });
    let hold: Awaited<ReturnType<typeof answerOf>>;
    try {
      const held = post(`/api/orders/${orderId}/hold`, { reason: "high_risk" }).then(answerOf);
      // (An answer before that fails below, rather than hanging here.)
      await Promise.race([waited.promise, held]);
      answer.open();
      hold = await held;
    } finally {
      spy.mockRestore();
      answer.open();
    }
    await h.settle(2);

    const order = await h.order(orderId);
    const trackingNumber = defined(order.shipment).trackingNumber;
    expect(order.status).toBe("shipped");
    // The label was bought: the answer says so, with what ops need to stop the parcel.
    expect(hold.status).toBe(409);
    expect(codeOf(hold)).toBe("order_not_holdable");
    expect(JSON.stringify(hold.body)).toContain(trackingNumber);
    expect(JSON.stringify(hold.body)).toMatch(/intercept the parcel/);
    expect(order.holdReason).toBeNull();
    expect(order.timeline.map((e) => e.kind)).not.toContain("hold-placed");
  });

  it("a hold accepted after the run's last look stops the run before the label; its release resumes fulfilment, once", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_race_late_hold",
      items: [{ sku: "RACE-1", quantity: 1 }],
    });
    // The run reads the hold with the address, then asks the carrier about the address: a hold
    // landing while that answer is on the wire is after the last look, before the purchase mark.
    const asked = () => h.easyPost.requests.filter((r) => r.endpoint === "addresses.create").length;
    const askedBefore = asked();
    const verified = gate();
    h.easyPost.injectFailure("addresses.create", {
      kind: "held",
      until: verified.promise,
      afterProcessing: true,
    });
    let eventId: string;
    try {
      eventId = await h.placeOrder(orderId);
      await eventually("address asked", () => asked() > askedBefore);
      const held = await post(`/api/orders/${orderId}/hold`, { reason: "high_risk" });
      expect(held.status).toBe(200);
    } finally {
      verified.open();
      h.easyPost.clearFailures();
    }
    await h.settle(2);
    expect((await h.runsOfEvent(eventId)).map((run) => run.status)).toEqual(["Completed"]);
    expect(await statusOf(orderId)).toBe("fulfilling");
    expect(labelsOf(orderId)).toHaveLength(0);

    // Two releases at once: one releases, and fulfilment resumes once.
    const releases = await Promise.all([1, 2].map(() => post(`/api/orders/${orderId}/release-hold`)));
    expect(releases.map((r) => r.status).sort()).toEqual([200, 409]);
    await h.settle(3);

    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.holdReason).toBeNull();
    expect(labelsOf(orderId)).toHaveLength(1);
    expect(order.emails.map((email) => email.template).filter((t) => t === "shipped")).toHaveLength(1);
    expect(order.timeline.filter((e) => e.kind === "redriven")).toHaveLength(1);
  });

  it("a cancel of a booked order whose label sits in pre_transit (not scanned yet) hands the label back", async () => {
    const { orderId } = await shippedOrder("cus_race_pre_transit");
    await h.easyPost.advanceTracker(`order-${orderId}`, "pre_transit");
    await eventually(
      "tracker recorded",
      async () => (await h.order(orderId)).shipment?.trackerStatus === "pre_transit",
    );

    expect((await post(`/api/orders/${orderId}/cancel`)).status).toBe(202);
    await h.settle(2);

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(labelByReference(`order-${orderId}`)?.refund_status).toBe("submitted");
    expect(order.payment?.status).toBe("refunded");
  });

  it("a re-drive of an order in several parcels, some delivered: nothing bought again, delivered once the rest is", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_race_redrive_parcels",
      items: [
        { sku: "RACE-BIKE", quantity: 1 },
        { sku: "RACE-MUG", quantity: 1 },
      ],
    });
    // The tracking e-mail cannot be written on any attempt: the run fails after the booking.
    await h.db.$executeRawUnsafe(
      `CREATE FUNCTION refuse_shipped_mail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
         IF NEW.template = 'shipped' THEN RAISE EXCEPTION 'database unavailable'; END IF; RETURN NEW; END $$`,
    );
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_shipped_mail BEFORE INSERT ON email_messages FOR EACH ROW EXECUTE FUNCTION refuse_shipped_mail()`,
    );
    let eventId: string;
    try {
      eventId = await h.placeOrder(orderId);
      await h.settle(20);
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER refuse_shipped_mail ON email_messages`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION refuse_shipped_mail()`);
    }
    expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Failed");
    const shipped = await h.order(orderId);
    expect(shipped.status).toBe("shipped");
    expect(shipped.shipments).toHaveLength(2);
    const [first, second] = shipped.shipments;
    await h.easyPost.advanceTracker(defined(first).trackingNumber, "delivered");
    await eventually(
      "parcel 1 delivered",
      async () => (await h.order(orderId)).shipments[0]?.status === "delivered",
    );
    const boughtBefore = labelsOf(orderId).length;

    expect((await post(`/api/orders/${orderId}/redrive`)).status).toBe(202);
    await h.settle(2);
    const [redriven] = await h.runsOfEvent(`order-placed-${orderId}-redrive-1`);
    expect(redriven?.status).toBe("Running"); // waiting for parcel 2
    expect(await statusOf(orderId)).toBe("shipped");

    await h.easyPost.advanceTracker(defined(second).trackingNumber, "delivered");
    await h.settle(2);
    await h.engine.clock.advance(4 * 24 * 3600 * 1000);
    await h.settle(2);
    const order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(labelsOf(orderId)).toHaveLength(boughtBefore);
    expect(order.emails.map((email) => email.template).sort()).toEqual(["reviewRequest", "shipped"]);
    expect(order.timeline.filter((e) => e.kind === "delivered")).toHaveLength(1);
  });

  it("two cancels at once get the same answer and leave one trace", async () => {
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_race_two_cancels",
      items: [{ sku: "RACE-1", quantity: 1 }],
    });
    // Held by ops: the run waits for the release, so both cancels find it in one state.
    expect((await post(`/api/orders/${orderId}/hold`, { reason: "other" })).status).toBe(200);
    await h.placeOrder(orderId);
    await h.settle(2);
    const answers = await Promise.all(
      [1, 2].map(() => post(`/api/orders/${orderId}/cancel`, { reason: "twice" }).then(answerOf)),
    );
    expect(answers.map((a) => a.status)).toEqual([202, 202]);
    expect(answers[0]?.body).toEqual(answers[1]?.body);
    await h.settle(2);
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.timeline.filter((e) => e.kind === "cancel-requested")).toHaveLength(1);
  });

  it("a refund Stripe refuses (refunded at the Dashboard, its webhook lost) answers 409 and writes nothing", async () => {
    const { orderId, paymentIntentId } = await shippedOrder("cus_race_refused_refund");
    await h.sandbox.refund({ paymentIntent: paymentIntentId }, { deliver: false });
    const before = await h.order(orderId);

    const refused = await answerOf(await post(`/api/orders/${orderId}/refund`, { reason: "goodwill" }));
    expect(refused.status).toBe(409);
    expect(codeOf(refused)).toBe("order_not_refundable");
    const after = await h.order(orderId);
    expect(await h.db.refund.count({ where: { orderId } })).toBe(0);
    expect(after.timeline.map((e) => e.kind)).toEqual(before.timeline.map((e) => e.kind));
    expect(after.payment).toEqual(before.payment);
  });

  it("four copies of a return label's 'delivered' event at once are each acknowledged, and received once", async () => {
    const { orderId } = await shippedOrder("cus_race_return_deliveries");
    await h.easyPost.advanceTracker(`order-${orderId}`, "delivered");
    await h.settle(2);
    expect(await statusOf(orderId)).toBe("delivered");
    const sig = h.services.links.sign("order", orderId);
    const asked = await fetch(`${h.appUrl}/orders/${orderId}/return?sig=${sig}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ "qty_RACE-1": "1", reason: "no_longer_needed" }).toString(),
      redirect: "manual",
    });
    expect(asked.status).toBe(303);
    await h.settle(3);
    const [requested] = await h.db.return.findMany({ where: { orderId } });
    const trackingNumber = defined(requested?.labelTrackingNumber ?? undefined);

    const moved = await h.easyPost.advanceTracker(trackingNumber, "delivered", { deliver: false });
    const { body, signature } = h.easyPost.signedDelivery(moved.event.id);
    const statuses = await Promise.all(
      [1, 2, 3, 4].map(async () => {
        const res = await fetch(`${h.appUrl}/api/carrier/webhook`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hmac-signature": signature },
          body,
        });
        return res.status;
      }),
    );
    expect(statuses).toEqual([200, 200, 200, 200]);
    await h.settle(3);
    const timeline = (await h.order(orderId)).timeline.map((e) => e.kind);
    expect(timeline.filter((k) => k === "return-received")).toHaveLength(1);
  });
});
