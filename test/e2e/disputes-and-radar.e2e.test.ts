import { E2eHarness } from "./e2e-harness";

jest.setTimeout(180_000);

const shipping = {
  name: "Ada Lovelace",
  address: { line1: "1 Main St", city: "Springfield", state: "IL", postal_code: "62701", country: "US" },
};

/**
 * Disputes and Radar reviews hold an order back from the carrier. Paid at checkout (automatic
 * capture) and waiting out a FULFILMENT_HOLD window, the order has its money and no label yet:
 * the moment a dispute or a review can come before the parcel.
 */
describe("end to end: disputes and Radar reviews", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    h = await E2eHarness.start({
      env: { SHIPPING_COUNTRIES: "US", PAYMENT_CAPTURE: "automatic", FULFILMENT_HOLD: "1h" },
    });
    await h.addProduct("RISK-MUG", 10, 1800);
  });
  afterAll(() => h.close());

  async function paidOrder(customerId: string) {
    const { orderId, checkoutSessionId } = await h.checkout(customerId, [{ sku: "RISK-MUG", quantity: 1 }]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "paid", { shipping });
    return h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.holdReason).toBe("fulfilment_window");
      return order;
    }, 60_000);
  }
  const labelsOf = (orderId: string) =>
    h.easyPost.purchased().filter((s) => s.reference === `order-${orderId}`);

  it("a dispute on an unshipped order: held, no label, ops alerted with the due date and evidence", async () => {
    const order = await paidOrder("cus_dispute");
    const { dispute } = await h.sandbox.dispute({
      paymentIntent: order.paymentIntentId as string,
      reason: "product_not_received",
    });
    await h.eventually(async () => expect((await h.order(order.id)).holdReason).toBe("dispute"));
    const alert = await h.eventually(async () => {
      const found = h.slack.bodies.map((b) => JSON.stringify(b)).find((b) => b.includes(dispute.id));
      expect(found).toBeDefined();
      return found as string;
    });
    expect(alert).toContain("order held, no label");
    expect(alert).toContain(new Date((dispute.evidence_details.due_by ?? 0) * 1000).toISOString());
    expect(alert).toContain("product_not_received");
    expect(alert).toContain("emailsSent");
    const timeline = (await h.order(order.id)).timeline.filter((entry) => entry.kind === "dispute-updated");
    expect(timeline.map((entry) => (entry.detail as { event: string }).event)).toEqual([
      "charge.dispute.created",
      "charge.dispute.funds_withdrawn",
    ]);
    expect(labelsOf(order.id)).toHaveLength(0);
  });

  it("a Radar review opened before the label: no label until it closes approved", async () => {
    const order = await paidOrder("cus_review");
    const { review } = await h.sandbox.openReview(order.paymentIntentId as string);
    await h.eventually(async () => expect((await h.order(order.id)).holdReason).toBe("radar_review"));
    expect(labelsOf(order.id)).toHaveLength(0);

    await h.sandbox.closeReview(review.id, "approved");
    const shipped = await h.eventually(async () => {
      const current = await h.order(order.id);
      expect(current.status).toBe("shipped");
      return current;
    }, 60_000);
    expect(shipped.holdReason).toBeNull();
    expect(labelsOf(order.id)).toHaveLength(1);
  });
});
