import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

const day = 24 * 3600_000;

/**
 * The card authorization lapses before fulfilment captures it. Whichever way Stripe reports it (the
 * PaymentIntent already canceled as expired, or the capture refused with charge_expired_for_capture /
 * capture_charge_authorization_expired), the order is a payment failure: not retried, compensated once, the
 * customer told once, ops told in words.
 */
describe("fulfil-order when the authorization expired before capture", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  async function expectCompensatedAsExpired(
    orderId: string,
    paymentIntentId: string,
    eventId: string,
    sku: string,
    slackBefore: number,
  ) {
    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Failed");
    const order = await h.order(orderId);
    expect(order.status).toBe("payment_failed");
    expect(await h.stockOf(sku)).toBe(5);
    expect(order.reservations).toEqual([expect.objectContaining({ sku, status: "released" })]);
    expect(order.payment?.status).toBe("voided");
    expect(order.shipment).toBeNull();
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");

    // The customer is told once, in words meant for them.
    const mails = h.smtp.accepted.filter(
      (mail) => mail.messageId === `<payment-failed-${orderId}@shop.example>`,
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain("The hold on your card expired before we could take the payment.");

    // Ops: one alert and the timeline, both saying what happened.
    const alerts = h.slack.bodies.slice(slackBefore).map((body) => JSON.stringify(body));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toContain(orderId);
    expect(alerts[0]).toMatch(/authorization expired/);
    const failed = order.timeline.filter((entry) => entry.kind === "payment-failed");
    expect(failed).toHaveLength(1);
    expect(JSON.stringify(failed[0]?.detail)).toMatch(/authorization expired/);
    expect(order.timeline.filter((entry) => entry.kind === "stock-released")).toHaveLength(1);
  }

  it("Stripe already expired it (canceled, cancellation_reason expired): Stripe refuses the one capture, nothing is taken", async () => {
    await h.addProduct("LAPSED-1", 5);
    const slackBefore = h.slack.bodies.length;
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_lapsed",
      items: [{ sku: "LAPSED-1", quantity: 2 }],
    });
    const lapse = await h.sandbox.advanceClock(7 * day + 60_000);
    expect(lapse.paymentIntents.map((paymentIntent) => paymentIntent.id)).toContain(paymentIntentId);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.cancellation_reason).toBe("expired");

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    await expectCompensatedAsExpired(orderId, paymentIntentId, eventId, "LAPSED-1", slackBefore);
    // No look first (decision 0120): the capture itself is Stripe's answer, a 400 that moves no money.
    const captures = h.stripeCalls("payment_intents.capture").filter((c) => c.path.includes(paymentIntentId));
    expect(captures.map((c) => c.status)).toEqual([400]);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.amount_received ?? 0).toBe(0);
  });

  it("the window passed but Stripe has not expired it yet: capture_charge_authorization_expired, not retried", async () => {
    await h.addProduct("LAPSED-2", 5);
    const slackBefore = h.slack.bodies.length;
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_lapsing",
      items: [{ sku: "LAPSED-2", quantity: 1 }],
    });
    await h.sandbox.advanceClock(7 * day + 60_000, { expire: false });
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("requires_capture");

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    await expectCompensatedAsExpired(orderId, paymentIntentId, eventId, "LAPSED-2", slackBefore);
    const captures = h.stripeCalls("payment_intents.capture").filter((c) => c.path.includes(paymentIntentId));
    expect(captures.map((c) => c.status)).toEqual([400]);
  });

  it("Stripe expires it between our look and our capture: charge_expired_for_capture, not retried", async () => {
    await h.addProduct("LAPSED-3", 5);
    const slackBefore = h.slack.bodies.length;
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_raced",
      items: [{ sku: "LAPSED-3", quantity: 1 }],
    });
    h.sandbox.injectFailure("payment_intents.capture", {
      kind: "capture_failure",
      code: "charge_expired_for_capture",
    });

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    await expectCompensatedAsExpired(orderId, paymentIntentId, eventId, "LAPSED-3", slackBefore);
    const captures = h.stripeCalls("payment_intents.capture").filter((c) => c.path.includes(paymentIntentId));
    expect(captures.map((c) => c.status)).toEqual([400]);
  });
});
