import { adminToken, E2eHarness } from "./e2e-harness";

jest.setTimeout(180_000);

const day = 24 * 3600 * 1000;
const reference = (orderId: string) => `order-${orderId}`;

/**
 * Checkout with an address, payment, a label bought once through the EasyPost stand-in (driven by the app
 * through @easypost/api) with that address, the tracker driven to delivered by signed carrier events, then
 * the review; a SIGKILL during booking still buys one label.
 */
describe("end to end: shipping through EasyPost", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    h = await E2eHarness.start({ env: { SHIPPING_COUNTRIES: "US,CA" } });
    await h.addProduct("E2E-SHIP", 20, 2500);
  });
  afterAll(() => h.close());

  const shippedOrder = (orderId: string) =>
    h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    }, 60_000);
  const shipmentsFor = (orderId: string) =>
    h.easyPost.shipments().filter((s) => s.reference === reference(orderId));
  const buysFor = (shipmentId: string | undefined, status: number) =>
    h.easyPost.requests.filter(
      (r) => r.endpoint === "shipments.buy" && r.status === status && r.path.includes(shipmentId ?? "-"),
    );

  it("checkout with an address, one label with that address, tracker to delivered by signed events, then the review", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_ship_happy", [
      { sku: "E2E-SHIP", quantity: 2 },
    ]);
    const shipping = {
      name: "Grace Hopper",
      phone: "+16135550188",
      address: {
        line1: "1 Wellington St",
        city: "Ottawa",
        state: "ON",
        postal_code: "K1A 0A9",
        country: "CA",
      },
    };
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", { shipping });

    const shipped = await shippedOrder(orderId);
    expect(shipped.shippingAddress).toEqual({
      name: "Grace Hopper",
      phone: "+16135550188",
      line1: "1 Wellington St",
      city: "Ottawa",
      state: "ON",
      postalCode: "K1A 0A9",
      country: "CA",
    });
    const [label, ...others] = shipmentsFor(orderId);
    expect(others).toHaveLength(0);
    expect(label?.to_address).toMatchObject({
      name: "Grace Hopper",
      street1: "1 Wellington St",
      city: "Ottawa",
      zip: "K1A 0A9",
      country: "CA",
      phone: "+16135550188",
    });
    expect(buysFor(label?.id, 200)).toHaveLength(1);
    expect(shipped.shipment).toMatchObject({
      carrier: label?.selected_rate?.carrier,
      service: label?.selected_rate?.service,
      trackingNumber: label?.tracking_code,
      labelUrl: label?.postage_label?.label_url,
      providerId: label?.id,
      status: "booked",
    });

    // The admin view shows where it goes and how.
    const view = (await (
      await fetch(`${h.app.url}/api/orders/${orderId}`, {
        headers: { authorization: `Bearer ${adminToken}` },
      })
    ).json()) as { shippingAddress: unknown; shipment: { labelUrl: string; trackerStatus: string | null } };
    expect(view.shippingAddress).toMatchObject({ line1: "1 Wellington St", country: "CA" });
    expect(view.shipment.labelUrl).toBe(label?.postage_label?.label_url);

    await h.engine.drain(); // the run waits for the delivery event
    for (const status of ["pre_transit", "in_transit", "out_for_delivery"] as const) {
      const { delivery } = await h.easyPost.advanceTracker(label?.tracking_code as string, status);
      expect(delivery?.responseStatus).toBe(200);
    }
    expect((await h.order(orderId)).shipment).toMatchObject({
      status: "booked",
      trackerStatus: "out_for_delivery",
    });
    expect((await h.order(orderId)).status).toBe("shipped");

    const { delivery } = await h.easyPost.advanceTracker(label?.tracking_code as string, "delivered");
    expect(delivery?.responseStatus).toBe(200);
    await h.eventually(async () => expect((await h.order(orderId)).status).toBe("delivered"));
    await h.engine.drain(); // the run is asleep for REVIEW_AFTER_DELIVERY before the clock moves

    await h.engine.clock.advance(3 * day);
    await h.eventually(async () => {
      const [done] = await h.runsOfEvent(`order-placed-${orderId}`);
      expect(done?.status).toBe("Completed");
    });
    expect((await h.order(orderId)).status).toBe("completed");
    expect(h.smtp.accepted.filter((m) => m.messageId === `<review-${orderId}@shop.example>`)).toHaveLength(1);
    expect(shipmentsFor(orderId)).toHaveLength(1);
    expect(buysFor(label?.id, 200)).toHaveLength(1);
  });

  it("a SIGKILL while the label is being bought (bought, answer not yet sent) still buys one label", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_ship_kill", [
      { sku: "E2E-SHIP", quantity: 1 },
    ]);
    // EasyPost buys the label, then takes 5 s to answer: the app is killed in between.
    h.easyPost.injectFailure("shipments.buy", { kind: "delay", ms: 5_000, afterProcessing: true });
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");

    await h.eventually(async () =>
      expect(h.easyPost.purchased().filter((s) => s.reference === reference(orderId))).toHaveLength(1),
    );
    await h.app.stop("SIGKILL");
    await h.startApp();

    const shipped = await shippedOrder(orderId);
    const [label, ...others] = shipmentsFor(orderId);
    expect(others).toHaveLength(0);
    expect(shipped.shipment?.trackingNumber).toBe(label?.tracking_code);
    expect(buysFor(label?.id, 200)).toHaveLength(1);
    expect(buysFor(label?.id, 422)).toHaveLength(0);
    expect(await h.db.shipment.count({ where: { orderId } })).toBe(1);
    // Decision 0185: the restarted attempt found the label by the id recorded before the buy.
    expect(
      await h.db.carrierShipmentId.findUnique({ where: { reference: reference(orderId) } }),
    ).toMatchObject({ shipmentId: label?.id });
    expect(label?.fees.filter((fee) => fee.type === "PostageFee" && fee.charged)).toHaveLength(1);
  });

  it("a SIGKILL while the shipment is being created (created, answer not yet sent) creates and buys once", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_ship_kill3", [
      { sku: "E2E-SHIP", quantity: 1 },
    ]);
    // EasyPost creates the shipment, then takes 5 s to answer: the app is killed in between.
    h.easyPost.injectFailure("shipments.create", { kind: "delay", ms: 5_000, afterProcessing: true });
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");

    await h.eventually(async () => expect(shipmentsFor(orderId)).toHaveLength(1));
    await h.app.stop("SIGKILL");
    await h.startApp();

    const shipped = await shippedOrder(orderId);
    const [label, ...others] = shipmentsFor(orderId);
    expect(others).toHaveLength(0);
    expect(shipped.shipment?.trackingNumber).toBe(label?.tracking_code);
    expect(buysFor(label?.id, 200)).toHaveLength(1);
    expect(label?.fees.filter((fee) => fee.type === "PostageFee" && fee.charged)).toHaveLength(1);
    expect(
      await h.db.carrierShipmentId.findUnique({ where: { reference: reference(orderId) } }),
    ).toMatchObject({ shipmentId: label?.id });
  });

  it("a SIGKILL between creating the shipment and buying it buys that shipment's label, once", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_ship_kill2", [
      { sku: "E2E-SHIP", quantity: 1 },
    ]);
    // The buy is held (not executed) long enough to kill the app while it waits.
    h.easyPost.injectFailure("shipments.buy", { kind: "delay", ms: 5_000, afterProcessing: false });
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");

    await h.eventually(async () => expect(shipmentsFor(orderId)).toHaveLength(1));
    await h.eventually(async () =>
      expect(
        h.easyPost.requests.filter(
          (r) => r.endpoint === "shipments.retrieve" && r.path.includes(reference(orderId)),
        ),
      ).not.toHaveLength(0),
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // the buy request is on its way
    await h.app.stop("SIGKILL");
    await h.startApp();

    const shipped = await shippedOrder(orderId);
    const [label, ...others] = shipmentsFor(orderId);
    expect(others).toHaveLength(0);
    expect(shipped.shipment?.trackingNumber).toBe(label?.tracking_code);
    expect(h.easyPost.purchased().filter((s) => s.reference === reference(orderId))).toHaveLength(1);
  });
});
