import { startShopLifecycleApp } from "../support/shop-lifecycle-app";
import { E2eHarness } from "./e2e-harness";

jest.setTimeout(240_000);

/**
 * Issue 40's must-show, the crash part: the app process (src/server.ts, production's entry point)
 * SIGKILLed twice in the middle of one order, just after its payment and just after its shipment
 * became lifecycle facts (whether or not its outbox sender had published them yet), and restarted.
 * A shop's own Inngest function, registered on the engine beside ours, still receives each of the
 * order's lifecycle events once.
 */
describe("end to end: lifecycle events across SIGKILLs of the app", () => {
  let h: E2eHarness;
  let shop: Awaited<ReturnType<typeof startShopLifecycleApp>>;

  beforeAll(async () => {
    h = await E2eHarness.start();
    await h.addProduct("E2E-LIFE", 10, 2000);
    shop = await startShopLifecycleApp({
      engineUrl: h.engineUrl,
      sync: (url) => h.engine.sync(url),
    });
  });
  afterAll(async () => {
    await h.close();
    await shop.close();
  });

  /** Kills the app the moment the order's `name` event is in the outbox (a state, not a timer). */
  const killOnceWritten = async (orderId: string, name: string) => {
    await h.eventually(async () =>
      expect(await h.db.lifecycleOutboxEntry.count({ where: { orderId, name } })).toBe(1),
    );
    await h.app.stop("SIGKILL");
    await h.startApp();
  };

  it("payment, shipping and delivery: each event once, the app killed after the payment and the shipment", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_e2e_life", [
      { sku: "E2E-LIFE", quantity: 1 },
    ]);
    const completion = h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    await killOnceWritten(orderId, "shop/order.paid.v1");
    await completion;
    await killOnceWritten(orderId, "shop/order.shipped.v1");

    const shipped = await h.eventually(async () => {
      const order = await h.order(orderId);
      expect(order.status).toBe("shipped");
      return order;
    }, 90_000);
    await h.engine.drain(); // the run waits for the delivery event before the carrier reports it
    const { delivery } = await h.easyPost.advanceTracker(shipped.shipment?.trackingNumber ?? "", "delivered");
    expect(delivery?.responseStatus).toBe(200);
    await h.eventually(async () => expect((await h.order(orderId)).status).toBe("delivered"), 60_000);

    const expected = { "shop/order.paid.v1": 1, "shop/order.shipped.v1": 1, "shop/order.delivered.v1": 1 };
    // Every row of the order published, and every run that started finished: then the counts are final.
    await h.eventually(async () => {
      const rows = await h.db.lifecycleOutboxEntry.findMany({ where: { orderId } });
      expect(rows.map((row) => row.name).sort()).toEqual(Object.keys(expected).sort());
      expect(rows.filter((row) => row.sentAt === null)).toEqual([]);
    }, 60_000);
    await h.eventually(async () => expect(shop.countsOf(orderId)).toEqual(expected), 60_000);
    await h.engine.drain();
    expect(shop.countsOf(orderId)).toEqual(expected);
    expect(
      shop.received
        .filter((e) => e.orderId === orderId)
        .map((e) => e.id)
        .sort(),
    ).toEqual([
      `lifecycle-order-delivered-${orderId}`,
      `lifecycle-order-paid-${orderId}`,
      expect.stringMatching(/^lifecycle-order-shipped-/),
    ]);
  });
});
