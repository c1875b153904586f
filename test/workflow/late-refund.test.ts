import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

const minute = 60_000;

/**
 * A full refund at Stripe stops an unshipped order through the cancel path. Past CANCEL_WINDOW the
 * run's cancelOn no longer listens, so no cleanup run follows the cancel: the guarded writes still
 * refuse to ship, and the run itself must then finish as the cleanup would (stock back, order
 * ended, one e-mail).
 */
describe("a full refund at Stripe after the run stopped listening for cancels", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { CANCEL_WINDOW: "10m", FULFILMENT_HOLD: "1h" } });
    await h.addProduct("LATE-REFUND-1", 5);
    // Stripe's webhook reaches the app here (the harness otherwise leaves Stripe's events undelivered).
    h.sandbox.setWebhookUrl(`${h.appUrl}/api/stripe/webhook`);
  });
  afterAll(() => h.close());

  it("ends the order cancelled, gives the stock back and e-mails the customer once", async () => {
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_late_refund",
      items: [{ sku: "LATE-REFUND-1", quantity: 1 }],
      outcome: "paid",
    });
    const eventId = await h.placeOrder(orderId);
    await h.engine.drain();
    // The run holds the stock and waits out FULFILMENT_HOLD.
    expect((await h.order(orderId)).holdReason).toBe("fulfilment_window");
    expect(await h.stockOf("LATE-REFUND-1")).toBe(4);

    // Past CANCEL_WINDOW, still inside the hold: the cancelOn has timed out.
    await h.engine.clock.advance(15 * minute);
    await h.engine.drain();

    const refunded = await h.sandbox.refund({ paymentIntent: paymentIntentId });
    expect(refunded.deliveries.length).toBeGreaterThan(0);
    expect(refunded.deliveries.every((delivery) => delivery.status === 200)).toBe(true);
    expect((await h.order(orderId)).cancelRequestedAt).not.toBeNull();

    await h.engine.clock.advance(60 * minute);
    await h.settle();

    const [run] = await h.runsOfEvent(eventId);
    expect(run?.status).toBe("Completed");
    const order = await h.order(orderId);
    expect(order.status).toBe("cancelled");
    expect(order.shipment).toBeNull();
    expect(order.holdReason).toBeNull();
    expect(await h.stockOf("LATE-REFUND-1")).toBe(5);
    const mails = h.mailsTo(/has been cancelled/).filter((mail) => mail.messageId?.includes(orderId));
    expect(mails).toHaveLength(1);
    // Stripe already refunded it all: the run takes no second refund.
    expect(
      h.stripeCalls("refunds.create").filter((call) => call.idempotencyKey?.includes(orderId)),
    ).toHaveLength(0);
  });
});
