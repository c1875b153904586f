import { orderCancelled, orderPlaced } from "../../src/events/contracts";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

const minute = 60_000;

/**
 * The guards that keep a paid order from being fulfilled twice, charged without being told, or cancelled past
 * its window, each with a test that fails when the guard is broken.
 */
describe("fulfil-order guards", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  const refundsOf = (paymentIntentId: string) =>
    h
      .stripeCalls("refunds.create")
      .filter(
        (call) => call.status === 200 && !call.replayed && call.params.payment_intent === paymentIntentId,
      );

  it("claim: a second run for the same order stops at the claim and changes nothing", async () => {
    await h.addProduct("CLAIM-1", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_claim",
      items: [{ sku: "CLAIM-1", quantity: 2 }],
    });
    await h.placeOrder(orderId);
    await h.engine.drain();
    // Past Inngest's 24-hour idempotency window, a second shop/order.placed starts a second run.
    await h.engine.clock.advance(25 * 60 * minute);
    const before = await h.order(orderId);
    expect(before.status).toBe("shipped");
    const stripeCallsBefore = h.sandbox.requests.length;
    const mailsBefore = h.smtp.accepted.length;

    const order = await h.db.order.findUniqueOrThrow({ where: { id: orderId } });
    const second = orderPlaced.create({
      orderId,
      customerId: order.customerId,
      email: order.email,
      total: order.total,
      currency: order.currency,
      paymentIntentId: order.paymentIntentId,
      fulfilmentKey: orderId,
    });
    await h.send(second.name, second.data, `second-run-${orderId}`);
    await h.engine.drain();

    const [run] = await h.runsOfEvent(`second-run-${orderId}`);
    expect(run).toMatchObject({
      status: "Completed",
      output: { orderId, skipped: "claimed-by-another-run" },
    });
    const after = await h.order(orderId);
    expect(after.status).toBe("shipped");
    expect(after.claimId).toBe(before.claimId);
    expect(await h.stockOf("CLAIM-1")).toBe(3);
    expect(after.payment).toEqual(before.payment);
    expect(after.shipment).toEqual(before.shipment);
    expect(after.reservations).toEqual(before.reservations);
    expect(after.emails).toEqual(before.emails);
    expect(h.sandbox.requests.length).toBe(stripeCallsBefore);
    expect(h.smtp.accepted.length).toBe(mailsBefore);
    const added = after.timeline.slice(before.timeline.length);
    expect(added.map((entry) => [entry.kind, entry.runId])).toEqual([["claim-lost", run?.run_id]]);
  });

  it("compensation after retries run out: Stripe failing every attempt voids, releases and tells the customer once", async () => {
    await h.addProduct("RETRIES-1", 5);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_retries",
      items: [{ sku: "RETRIES-1", quantity: 2 }],
    });
    const slackBefore = h.slack.bodies.length;
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 6);

    const eventId = await h.placeOrder(orderId);
    await h.settle(20);

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Failed");
    const captures = h
      .stripeCalls("payment_intents.capture")
      .filter((c) => c.idempotencyKey === `capture-${orderId}`);
    expect(captures.map((c) => c.status)).toEqual([500, 500, 500, 500, 500, 500]);
    const order = await h.order(orderId);
    expect(order.status).toBe("payment_failed");
    expect(order.payment?.status).toBe("voided");
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(await h.stockOf("RETRIES-1")).toBe(5);
    expect(order.emails.map((email) => email.template)).toEqual(["paymentFailed"]);
    expect(h.slack.bodies.length).toBe(slackBefore + 1);
  });

  it("charged, then recording the capture failed on every attempt: compensation refunds what Stripe captured", async () => {
    await h.addProduct("CHARGED-1", 5);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_charged",
      items: [{ sku: "CHARGED-1", quantity: 1 }],
    });
    // The database fails inside charge-card, after Stripe took the money, on every attempt.
    await h.db.$executeRawUnsafe(
      `CREATE FUNCTION refuse_capture() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'database unavailable'; END $$`,
    );
    await h.db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_capture BEFORE INSERT OR UPDATE ON payments FOR EACH ROW WHEN (NEW.status = 'captured') EXECUTE FUNCTION refuse_capture()`,
    );
    try {
      const eventId = await h.placeOrder(orderId);
      await h.settle(20);
      expect((await h.runsOfEvent(eventId))[0]?.status).toBe("Failed");
    } finally {
      await h.db.$executeRawUnsafe(`DROP TRIGGER refuse_capture ON payments`);
      await h.db.$executeRawUnsafe(`DROP FUNCTION refuse_capture()`);
    }

    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("succeeded");
    expect(refundsOf(paymentIntentId)).toHaveLength(1);
    const order = await h.order(orderId);
    expect(order.payment).toMatchObject({ status: "refunded", amountCaptured: 2500, amountRefunded: 2500 });
    expect(order.status).toBe("cancelled");
    expect(await h.stockOf("CHARGED-1")).toBe(5);
    // Not "we could not take payment": the customer was charged and is told about the refund.
    expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
    const [mail] = h.smtp.accepted.filter((m) => m.messageId === `<cancelled-${orderId}@shop.example>`);
    expect(mail?.text).toContain("We have refunded $25.00");
    expect(order.timeline.map((entry) => entry.kind)).toContain("payment-refunded");
  });

  it("cancel window: a cancel event just inside the hour stops the run, one just after it does not", async () => {
    await h.addProduct("WINDOW-1", 5);
    const inside = await h.createPaidOrder({
      customerId: "cus_inside",
      items: [{ sku: "WINDOW-1", quantity: 1 }],
    });
    const outside = await h.createPaidOrder({
      customerId: "cus_outside",
      items: [{ sku: "WINDOW-1", quantity: 1 }],
    });
    const insideEvent = await h.placeOrder(inside.orderId);
    const outsideEvent = await h.placeOrder(outside.orderId);
    await h.engine.drain();
    const slackBefore = h.slack.bodies.length;

    await h.engine.clock.advance(59 * minute);
    const early = orderCancelled.create({ orderId: inside.orderId });
    await h.send(early.name, early.data);
    await h.engine.drain();
    expect((await h.runsOfEvent(insideEvent))[0]?.status).toBe("Cancelled");

    await h.engine.clock.advance(2 * minute);
    const late = orderCancelled.create({ orderId: outside.orderId });
    await h.send(late.name, late.data);
    await h.engine.drain();
    expect((await h.runsOfEvent(outsideEvent))[0]?.status).toBe("Running");
    const order = await h.order(outside.orderId);
    expect(order.status).toBe("shipped");
    expect(order.attentionReason).toBeNull();
    // The cancel inside the window found its parcel booked and not scanned: the label was handed
    // back and the order cancelled, with nothing for ops (test/workflow/label-void.test.ts).
    await h.engine.drain();
    const cancelled = await h.order(inside.orderId);
    expect(cancelled.status).toBe("cancelled");
    // Handed back as EasyPost takes a label back: a refund submitted, the carrier decides later.
    expect(cancelled.shipment?.labelRefundStatus).toBe("submitted");
    expect(h.slack.bodies.length).toBe(slackBefore);
  });
});
