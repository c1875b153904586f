import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

/** Digital-only products (a flag on the product) skip shipping and the address. */
describe("fulfill-order: a digital-only order", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.db.product.create({
      data: {
        sku: "EBOOK-1",
        name: "Field guide (PDF)",
        unitPrice: 900,
        currency: "usd",
        stockOnHand: 100,
        digital: true,
      },
    });
  });
  afterAll(() => h.close());

  it("captures, books no parcel and sends no shipping e-mail, then asks for a review after REVIEW_AFTER_DELIVERY", async () => {
    const { orderId } = await h.createPaidOrder({ items: [{ sku: "EBOOK-1", quantity: 1 }] });
    const eventId = await h.placeOrder(orderId);
    await h.settle(2);

    let order = await h.order(orderId);
    expect(order.status).toBe("delivered");
    expect(order.payment).toMatchObject({ status: "captured", amountCaptured: 900 });
    expect(order.shipment).toBeNull();
    expect(h.mailsTo(/on its way/)).toHaveLength(0);

    await h.engine.clock.advance(3 * 24 * 3600 * 1000);
    await h.engine.drain();

    const [finished] = await h.runsOfEvent(eventId);
    expect(finished).toMatchObject({ status: "Completed", output: { orderId, trackingNumber: null } });
    order = await h.order(orderId);
    expect(order.status).toBe("completed");
    expect(h.mailsTo(/How was your order/)).toHaveLength(1);
    expect(order.timeline.map((entry) => entry.kind)).toEqual([
      "claimed",
      "stock-reserved",
      "payment-captured",
      "nothing-to-ship",
      "review-requested",
    ]);
  });
});
