import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

describe("fulfill-order: compensation", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
  });
  afterAll(() => h.close());

  it("on a declined capture puts the stock back, voids the authorization, tells the customer once and alerts ops once", async () => {
    await h.addProduct("DECLINE-1", 5);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_decline",
      items: [{ sku: "DECLINE-1", quantity: 2 }],
    });
    h.sandbox.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Failed");
    const order = await h.order(orderId);
    expect(order.status).toBe("payment_failed");
    expect(await h.stockOf("DECLINE-1")).toBe(5);
    expect(order.reservations).toEqual([expect.objectContaining({ sku: "DECLINE-1", status: "released" })]);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(order.payment?.status).toBe("voided");
    expect(order.shipment).toBeNull();

    const mails = h.mailsTo(/could not take payment/);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.text).toContain("Your card was declined.");
    expect(h.slack.bodies).toHaveLength(1);
    const alert = JSON.stringify(h.slack.bodies[0]);
    expect(alert).toContain(orderId);
    expect(alert).toContain("cus_decline");
    expect(alert).toContain(run?.run_id);
    expect(alert).toContain("NonRetriableError");
    expect(h.stripeCalls("payment_intents.capture")).toHaveLength(1); // a decline is not retried
  });

  it("captures once across Stripe answering 500 twice, with one idempotency key", async () => {
    await h.addProduct("FLAKY-1", 5);
    const { orderId } = await h.createPaidOrder({
      customerId: "cus_flaky",
      items: [{ sku: "FLAKY-1", quantity: 1 }],
    });
    const before = h.stripeCalls("payment_intents.capture").length;
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 2);

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Running"); // shipped, waiting for delivery
    const captures = h.stripeCalls("payment_intents.capture").slice(before);
    expect(captures.map((c) => c.status)).toEqual([500, 500, 200]);
    expect(new Set(captures.map((c) => c.idempotencyKey))).toEqual(new Set([`capture-${orderId}`]));
    expect((await h.order(orderId)).payment).toMatchObject({ status: "captured", amountCaptured: 2500 });
  });

  it("cancels an order that runs out of stock without failing the run, alerting ops to a stock problem", async () => {
    await h.addProduct("SCARCE-1", 1);
    const slackBefore = h.slack.bodies.length;
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_scarce",
      items: [{ sku: "SCARCE-1", quantity: 3 }],
    });

    const eventId = await h.placeOrder(orderId);
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run).toMatchObject({
      status: "Completed",
      output: { orderId, outcome: "cancelled_out_of_stock" },
    });
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled_out_of_stock");
    expect(await h.stockOf("SCARCE-1")).toBe(1);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("canceled");
    expect(h.mailsTo(/could not fulfil/)).toHaveLength(1);
    // One notice, that it is a stock problem, not a run failure.
    expect(h.slack.bodies.slice(slackBefore).map((body) => JSON.stringify(body))).toEqual([
      expect.stringContaining("Stock problem"),
    ]);
  });

  it("refunds instead of voiding when an out-of-stock order was already charged (automatic capture)", async () => {
    await h.addProduct("SCARCE-2", 0);
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_auto",
      items: [{ sku: "SCARCE-2", quantity: 1 }],
      outcome: "paid",
    });

    await h.placeOrder(orderId);
    await h.settle();

    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled_out_of_stock");
    expect(order.payment).toMatchObject({ status: "refunded", amountRefunded: 2500 });
    const refunds = h.stripeCalls("refunds.create").filter((r) => r.idempotencyKey === `refund-${orderId}`);
    expect(refunds).toHaveLength(1);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.status).toBe("succeeded");
    const [mail] = h.smtp.accepted.filter((m) => m.messageId === `<out-of-stock-${orderId}@shop.example>`);
    expect(mail?.text).toContain("We have refunded $25.00");
    expect(mail?.text).toContain("Product SCARCE-2 sold out");
  });
});
