import { E2eHarness } from "./e2e-harness";

jest.setTimeout(120_000);

describe("end to end: checkout to review", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    h = await E2eHarness.start();
    await h.addProduct("E2E-HAPPY", 10, 2000);
  });
  afterAll(() => h.close());

  it("captures once, ships once, confirms once, and asks for a review after delivery and the virtual delay", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_e2e_happy", [
      { sku: "E2E-HAPPY", quantity: 2 },
    ]);
    const completion = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    expect(completion.deliveries.every((d) => d.status === 200)).toBe(true);

    const shipped = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    });
    const [run] = await h.runsOfEvent(`order-placed-${orderId}`);
    expect(run?.status).toBe("Running");
    expect(h.stripeCalls("payment_intents.capture").filter((c) => c.status === 200)).toHaveLength(1);
    expect(await h.db.shipment.count({ where: { orderId } })).toBe(1);
    await h.eventually(async () =>
      expect(h.smtp.accepted.filter((m) => /on its way/.test(m.subject ?? ""))).toHaveLength(1),
    );

    await h.engine.drain(); // the run waits for the delivery event before the carrier reports it
    // The carrier scans the parcel: EasyPost's stand-in POSTs the signed tracker.updated event.
    const { delivery } = await h.easyPost.advanceTracker(shipped.shipment?.trackingNumber ?? "", "delivered");
    expect(delivery?.responseStatus).toBe(200);
    await h.eventually(async () => expect((await h.order(orderId)).status).toBe("delivered"));
    // The review's 3-day sleep starts when the run has taken the delivery event: wait until the engine
    // is idle (the run asleep) before moving the clock, or a loaded machine moves it too early.
    await h.engine.drain();

    await h.engine.clock.advance(3 * 24 * 3600 * 1000);
    const finished = await h.eventually(async () => {
      const [done] = await h.runsOfEvent(`order-placed-${orderId}`);
      expect(done?.status).toBe("Completed");
      return done;
    });
    expect(finished?.output).toMatchObject({ orderId, trackingNumber: shipped.shipment?.trackingNumber });
    expect(h.smtp.accepted.filter((m) => /How was your order/.test(m.subject ?? ""))).toHaveLength(1);
    expect((await h.order(orderId)).status).toBe("completed");
  });
});
