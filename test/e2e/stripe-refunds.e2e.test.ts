import { adminToken, E2eHarness } from "./e2e-harness";

jest.setTimeout(180_000);

const shipping = {
  name: "Ada Lovelace",
  address: { line1: "1 Main St", city: "Springfield", state: "IL", postal_code: "62701", country: "US" },
};

/**
 * Money given back at Stripe, not through our API (the Dashboard, another system): every refund is
 * recorded once by its Stripe id, and a full refund before the label is bought stops the parcel.
 */
describe("end to end: refunds made at Stripe", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    h = await E2eHarness.start({ env: { SHIPPING_COUNTRIES: "US" } });
    await h.addProduct("REFUND-MUG", 10, 1500);
  });
  afterAll(() => h.close());

  const stock = async () =>
    (await h.db.product.findUniqueOrThrow({ where: { sku: "REFUND-MUG" } })).stockOnHand;

  it("a full refund at Stripe of a paid, unshipped order: not shipped, cancelled and refunded, stock back, one e-mail", async () => {
    const before = await stock();
    // The carrier does not answer: the run is paid and waiting on its label when the refund comes.
    h.easyPost.injectFailure("shipments.create", { kind: "hang" }, 1_000);
    const { orderId, checkoutSessionId } = await h.checkout("cus_dashboard_refund", [
      { sku: "REFUND-MUG", quantity: 2 },
    ]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });
    const captured = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.payment?.status).toBe("captured");
      return order;
    }, 60_000);
    expect(await stock()).toBe(before - 2);

    const { refund } = await h.sandbox.refund({ paymentIntent: captured.paymentIntentId as string });
    const done = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("cancelled");
      expect(order.emails.map((email) => email.template)).toEqual(["orderCancelled"]);
      return order;
    }, 90_000);
    h.easyPost.clearFailures();

    expect(done.shipment).toBeNull();
    expect(h.easyPost.purchased()).toHaveLength(0);
    expect(done.payment).toMatchObject({ status: "refunded", amountCaptured: 3000, amountRefunded: 3000 });
    const refunds = await h.db.refund.findMany({ where: { orderId } });
    expect(refunds).toEqual([
      expect.objectContaining({ providerId: refund.id, amount: 3000, status: "succeeded" }),
    ]);
    expect(await stock()).toBe(before);
    // No second refund was asked of Stripe: the cleanup found the money already returned.
    expect(h.stripeCalls("refunds.create")).toHaveLength(0);
    expect(done.timeline.map((entry) => entry.kind)).toEqual(
      expect.arrayContaining(["refund-recorded", "cancel-requested", "cancelled"]),
    );
  });

  it("a partial refund at Stripe of a shipped order is recorded once and shown, and the order ships on", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_partial_refund", [
      { sku: "REFUND-MUG", quantity: 1 },
    ]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });
    const shipped = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    }, 60_000);
    const { refund, events } = await h.sandbox.refund({
      paymentIntent: shipped.paymentIntentId as string,
      amount: 400,
    });
    // Stripe repeats itself: both events again.
    for (const event of events) await h.sandbox.redeliver(event.id);
    await h.eventually(async () => {
      const refunds = await h.db.refund.findMany({ where: { orderId } });
      expect(refunds).toEqual([
        expect.objectContaining({ providerId: refund.id, amount: 400, status: "succeeded" }),
      ]);
    });
    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.payment).toMatchObject({ amountRefunded: 400, status: "captured" });
    expect(order.timeline.filter((entry) => entry.kind === "refund-recorded")).toHaveLength(1);
    const details = await fetch(`${h.app.url}/api/orders/${orderId}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(await details.json()).toMatchObject({
      payment: {
        amountRefunded: 400,
        refunds: [expect.objectContaining({ providerId: refund.id, amount: 400 })],
      },
    });
  });

  it("a full refund at Stripe after the label is bought hands the label back to the carrier", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_refund_after_label", [
      { sku: "REFUND-MUG", quantity: 1 },
    ]);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });
    const shipped = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    }, 60_000);
    await h.sandbox.refund({ paymentIntent: shipped.paymentIntentId as string });
    await h.eventually(async () => {
      const [label] = h.easyPost.shipments().filter((s) => s.reference === `order-${orderId}`);
      expect(["submitted", "refunded"]).toContain(label?.refund_status);
    });
    const refunds = await h.db.refund.findMany({ where: { orderId } });
    expect(refunds).toEqual([expect.objectContaining({ amount: 1500, status: "succeeded" })]);
  });
});
