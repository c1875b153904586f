import { E2eHarness } from "./e2e-harness";

jest.setTimeout(180_000);

/**
 * A dispute that comes after the parcel: there is nothing left to stop, so no hold; ops get one
 * alert with what they need to answer it at Stripe (amount, reason, due date) and the evidence the
 * order has (the tracking number, the delivery date, the e-mails the customer was sent).
 */
describe("end to end: a dispute on a shipped order", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    h = await E2eHarness.start({ env: { SHIPPING_COUNTRIES: "US" } });
    await h.addProduct("DISPUTE-SHIPPED", 10, 2400);
  });
  afterAll(() => h.close());

  it("no hold, one ops alert with the amount, reason, evidence due date and the order's evidence", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_dispute_shipped", [
      { sku: "DISPUTE-SHIPPED", quantity: 1 },
    ]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    const shipped = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    }, 60_000);
    const trackingNumber = shipped.shipment?.trackingNumber as string;
    await h.eventually(async () =>
      expect(h.smtp.accepted.filter((m) => /on its way/.test(m.subject ?? ""))).toHaveLength(1),
    );
    await h.engine.drain(); // the run waits for the delivery event before the carrier reports it
    // The carrier scans the parcel: EasyPost's stand-in POSTs the signed tracker.updated event.
    const { delivery } = await h.easyPost.advanceTracker(trackingNumber, "delivered");
    expect(delivery?.responseStatus).toBe(200);
    const deliveredAt = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.shipment?.deliveredAt).toBeInstanceOf(Date);
      return (order.shipment?.deliveredAt as Date).toISOString();
    });

    const { dispute, events } = await h.sandbox.dispute({
      paymentIntent: shipped.paymentIntentId as string,
      reason: "product_not_received",
    });
    const alerts = await h.eventually(async () => {
      const found = h.slack.bodies.map((b) => JSON.stringify(b)).filter((b) => b.includes(dispute.id));
      expect(found).toHaveLength(1);
      return found;
    });
    const alert = alerts[0] as string;
    expect(alert).toContain("Payment disputed");
    expect(alert).not.toContain("order held");
    expect(alert).toContain(`${dispute.amount} ${dispute.currency}`);
    expect(alert).toContain("product_not_received");
    expect(alert).toContain(new Date((dispute.evidence_details.due_by ?? 0) * 1000).toISOString());
    expect(alert).toContain(trackingNumber);
    expect(alert).toContain(deliveredAt);
    expect(alert).toMatch(/emailsSent[^}]*shipped 20/);

    const after = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.timeline.filter((e) => e.kind === "dispute-updated")).toHaveLength(2);
      return order;
    });
    expect(after.holdReason).toBeNull();
    expect(after.status).toBe("delivered");
    // Redelivered, the events alert nobody twice.
    for (const event of events) expect((await h.sandbox.redeliver(event.id)).status).toBe(200);
    expect(h.slack.bodies.map((b) => JSON.stringify(b)).filter((b) => b.includes(dispute.id))).toHaveLength(
      1,
    );
  });
});
