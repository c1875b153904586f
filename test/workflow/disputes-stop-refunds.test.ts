import Stripe from "stripe";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(180_000);

/**
 * A charged-back payment is settled by its dispute: the cardholder gets the money from the card
 * network, so no refund may leave on top of it (a return's, an ops refund). Stripe refuses such a
 * refund (`charge_disputed`); we refuse it first, with a 409, and tell ops once per dispute what
 * to do. A dispute the shop won no longer holds anything.
 */
describe("disputes stop refunds", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({
      // ship_available: a line short at the reservation is refunded at the capture (or withheld).
      env: { RETURN_RESTOCKING_FEE: "0", RETURN_WINDOW: "30d", PARTIAL_FULFILMENT: "ship_available" },
    });
    await h.addProduct("DSP-1", 20, 2000);
    // Stripe's webhooks (the dispute's) reach the app here.
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
  });
  afterAll(() => h.close());

  const api = (path: string, body?: unknown) => h.adminApi(path, body);
  const refundsAtStripe = (paymentIntentId: string) => h.refundsAtStripe(paymentIntentId);
  const alertsAbout = (pattern: RegExp) => h.alertsAbout(pattern);
  const deliveredOrder = (customerId: string) =>
    h.deliveredOrder(customerId, [{ sku: "DSP-1", quantity: 3 }]);

  const returnDelivered = (orderId: string) => h.returnDelivered(orderId, [{ sku: "DSP-1", quantity: 2 }]);

  it("the stand-in refuses a refund of a charged-back payment as Stripe does", async () => {
    const { paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_dsp_sandbox",
      items: [{ sku: "DSP-1", quantity: 1 }],
      outcome: "paid",
    });
    await h.sandbox.dispute({ paymentIntent: paymentIntentId, reason: "fraudulent" }, { deliver: false });
    const refused = await h.services.stripe.refunds
      .create({ payment_intent: paymentIntentId, amount: 100 })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((refused as Stripe.errors.StripeInvalidRequestError).code).toBe("charge_disputed");
    expect(await refundsAtStripe(paymentIntentId)).toHaveLength(0);
  });

  it("a full dispute, then a return delivered and an ops refund: no refund leaves, 409 and one alert", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_dsp_full");
    const { dispute } = await h.sandbox.dispute({ paymentIntent: paymentIntentId, reason: "fraudulent" });
    await h.settle(2);
    expect(await h.db.dispute.findUnique({ where: { providerId: dispute.id } })).toMatchObject({
      status: "needs_response",
      amount: 6000,
    });

    const returnId = await returnDelivered(orderId);
    const done = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(done.status).toBe("closed");
    expect(done.refundAmount).toBe(0);
    const kinds = (await h.order(orderId)).timeline.map((entry) => entry.kind);
    expect(kinds.filter((kind) => kind === "return-refund-withheld")).toHaveLength(1);
    expect(kinds).not.toContain("return-refunded");

    for (const body of [{ amount: 500, reason: "goodwill" }, {}]) {
      const refused = await api(`/api/orders/${orderId}/refund`, body);
      expect(refused.status).toBe(409);
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe("charge_disputed");
      expect(error.message).toContain(dispute.id);
    }

    expect(await refundsAtStripe(paymentIntentId)).toHaveLength(0);
    expect(await h.db.refund.count({ where: { orderId } })).toBe(0);
    await h.settle(1);
    const told = alertsAbout(/Refund refused: the payment is disputed/);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(dispute.id);
    expect(told[0]).toContain("Stripe Dashboard");
    // The dispute itself was announced once, too, though its two events came with growing fields.
    expect(alertsAbout(/Payment disputed/).filter((body) => body.includes(dispute.id))).toHaveLength(1);
  });

  it("a dispute the shop won holds nothing: the refund goes through", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_dsp_won");
    const { dispute, events } = await h.sandbox.dispute({
      paymentIntent: paymentIntentId,
      reason: "fraudulent",
    });
    await h.settle(2);
    const refused = await api(`/api/orders/${orderId}/refund`, { amount: 700 });
    expect(refused.status).toBe(409);

    await h.sandbox.closeDispute(dispute.id, "won");
    await h.settle(2);
    expect((await h.db.dispute.findUniqueOrThrow({ where: { providerId: dispute.id } })).status).toBe("won");
    // Stripe redelivers the dispute's first events after it was won: a closed dispute stays closed.
    for (const event of events) expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
    await h.settle(1);
    expect((await h.db.dispute.findUniqueOrThrow({ where: { providerId: dispute.id } })).status).toBe("won");
    const refunded = await api(`/api/orders/${orderId}/refund`, { amount: 700 });
    expect(refunded.status).toBe(201);
    expect((await refundsAtStripe(paymentIntentId)).map((refund) => refund.amount)).toEqual([700]);
  });

  it("a lost dispute keeps holding the charge", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_dsp_lost");
    const { dispute } = await h.sandbox.dispute({ paymentIntent: paymentIntentId, reason: "fraudulent" });
    await h.sandbox.closeDispute(dispute.id, "lost");
    await h.settle(2);
    expect((await h.db.dispute.findUniqueOrThrow({ where: { providerId: dispute.id } })).status).toBe("lost");
    const refused = await api(`/api/orders/${orderId}/refund`, { amount: 700 });
    expect(refused.status).toBe(409);
    expect(await refundsAtStripe(paymentIntentId)).toHaveLength(0);
  });

  /** An order taken whole at checkout (automatic capture) one of whose lines then finds no stock. */
  async function paidOrderWithShortLine(customerId: string, suffix: string) {
    await h.addProduct(`DSP-KEEP-${suffix}`, 5, 2500);
    await h.addProduct(`DSP-GONE-${suffix}`, 0, 1000);
    return h.createPaidOrder({
      customerId,
      items: [
        { sku: `DSP-KEEP-${suffix}`, quantity: 1 },
        { sku: `DSP-GONE-${suffix}`, quantity: 1 },
      ],
      outcome: "paid",
    });
  }
  const shortNotices = (orderId: string) =>
    h.smtp.accepted.filter((mail) => mail.messageId === `<short-lines-${orderId}@shop.example>`);

  it("a short line of a charged-back payment is not refunded at the capture: withheld, one alert, no money promised", async () => {
    const { orderId, paymentIntentId } = await paidOrderWithShortLine("cus_dsp_short", "A");
    const { dispute } = await h.sandbox.dispute({ paymentIntent: paymentIntentId, reason: "fraudulent" });
    await h.settle(2);
    expect(await h.db.dispute.findUnique({ where: { providerId: dispute.id } })).toMatchObject({
      status: "needs_response",
    });

    await h.placeOrder(orderId);
    await h.settle();

    // Our records held the refund back: Stripe was not even asked.
    expect(
      h.stripeCalls("refunds.create").filter((call) => call.idempotencyKey === `refund-short-${orderId}`),
    ).toHaveLength(0);
    expect(await refundsAtStripe(paymentIntentId)).toHaveLength(0);
    const order = await h.order(orderId);
    expect(order.payment).toMatchObject({ amountCaptured: 3500, amountRefunded: 0 });
    const kinds = order.timeline.map((entry) => entry.kind);
    expect(kinds.filter((kind) => kind === "short-lines-refund-withheld")).toHaveLength(1);
    expect(kinds).not.toContain("short-lines-refunded");

    await h.settle(1);
    const told = alertsAbout(/Short lines not refunded: the payment is disputed/);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(dispute.id);
    expect(told[0]).toContain(orderId);

    // The customer hears which line does not ship, and no promise of the money under review.
    const notices = shortNotices(orderId);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).toContain("1 × Product DSP-GONE-A  $10.00");
    expect(notices[0]?.text).not.toMatch(/refunded|not been charged/);
    expect(notices[0]?.text).toContain("dispute");
  });

  it("Stripe's own charge_disputed answer (its dispute not yet recorded) withholds the short line too, told once per payment", async () => {
    const { orderId, paymentIntentId } = await paidOrderWithShortLine("cus_dsp_short_late", "B");
    // The dispute's webhook has not reached us: only Stripe knows.
    await h.sandbox.dispute({ paymentIntent: paymentIntentId, reason: "fraudulent" }, { deliver: false });

    await h.placeOrder(orderId);
    await h.settle();

    expect(await refundsAtStripe(paymentIntentId)).toHaveLength(0);
    const order = await h.order(orderId);
    expect(order.payment).toMatchObject({ amountCaptured: 3500, amountRefunded: 0 });
    const kinds = order.timeline.map((entry) => entry.kind);
    expect(kinds.filter((kind) => kind === "short-lines-refund-withheld")).toHaveLength(1);
    expect(kinds).not.toContain("short-lines-refunded");
    expect(kinds).not.toContain("run-failed");

    await h.settle(1);
    const told = alertsAbout(/Short lines not refunded: the payment is disputed/).filter((body) =>
      body.includes(paymentIntentId),
    );
    expect(told).toHaveLength(1);
    const notices = shortNotices(orderId);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.text).not.toMatch(/refunded|not been charged/);
  });
});
