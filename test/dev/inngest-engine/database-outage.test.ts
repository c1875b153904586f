import { captureLog } from "../../support/log-capture";
import { startDatabaseOutageProxy, type DatabaseOutageProxy } from "../../support/database-outage-proxy";
import { eventually, gate } from "../../support/eventually";
import { WorkflowHarness } from "../../support/workflow-harness";

jest.setTimeout(240_000);

/** How long the engine's database stays away: a restart of PostgreSQL, a failover. */
const outageMs = 30_000;
const orderCount = 8;

/**
 * The local engine loses its database for 30 s while orders are in flight and comes back by
 * itself: every order ships once, without restarting anything. Before claims were leases, a job
 * whose step result could not be recorded, and whose release then failed too, stayed claimed by
 * nobody until the engine restarted.
 */
describe("local engine: a database outage with orders in flight", () => {
  let h: WorkflowHarness;
  let proxy: DatabaseOutageProxy | undefined;
  const engineLog = captureLog("warn");
  const releaseFailures = () =>
    engineLog.lines().filter((line) => String(line.msg).startsWith("could not release job")).length;

  beforeAll(async () => {
    h = await WorkflowHarness.start({
      engineDatabaseUrl: async (url) => {
        proxy = await startDatabaseOutageProxy(url);
        return proxy.url;
      },
      engine: { logger: engineLog.logger, jobLeaseMs: 3_000 },
    });
    await h.addProduct("OUTAGE-1", 100);
  });
  afterAll(async () => {
    proxy?.restore();
    await h.close();
    await proxy?.close();
  });

  it("ships every order once after the database comes back, without a restart", async () => {
    // Each order's capture is held until the database is gone, so its result arrives during the outage.
    const capture = gate();
    h.sandbox.injectFailure("payment_intents.capture", { kind: "hang", until: capture.promise }, orderCount);
    const orders: { orderId: string; paymentIntentId: string }[] = [];
    for (let i = 0; i < orderCount; i++) {
      orders.push(
        await h.createPaidOrder({ customerId: `cus_outage_${i}`, items: [{ sku: "OUTAGE-1", quantity: 1 }] }),
      );
    }
    const eventIds: string[] = [];
    for (const order of orders) eventIds.push(await h.placeOrder(order.orderId));
    await eventually(
      "every order is charging its card",
      async () => {
        const states = await Promise.all(orders.map((order) => h.order(order.orderId)));
        return states.every((order) => order.timeline.some((entry) => entry.kind === "stock-reserved"));
      },
      { attempts: 2_000, everyMs: 50 },
    );

    const outage = proxy;
    if (!outage) throw new Error("the engine's database proxy did not start");
    outage.cut();
    const cutAt = Date.now();
    capture.open();
    // The failure that used to strand runs: results that cannot be recorded, jobs that cannot be handed back.
    await eventually("the engine failed to hand a job back", () => releaseFailures() > 0, {
      attempts: 4_000,
      everyMs: 50,
    });
    // The outage lasts its full length (the database is away, not a step held by a timer).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, outageMs - (Date.now() - cutAt))));
    outage.restore();

    await eventually(
      "every order shipped",
      async () => {
        await h.settle(1);
        const states = await Promise.all(orders.map((order) => h.order(order.orderId)));
        return states.every((order) => order.status === "shipped");
      },
      { attempts: 600, everyMs: 100 },
    );
    for (const { orderId } of orders) {
      const order = await h.order(orderId);
      const kinds = order.timeline.map((entry) => entry.kind);
      expect({ orderId, captured: kinds.filter((kind) => kind === "payment-captured").length }).toEqual({
        orderId,
        captured: 1,
      });
      expect({ orderId, booked: kinds.filter((kind) => kind === "shipment-booked").length }).toEqual({
        orderId,
        booked: 1,
      });
      expect(order.payment?.amountCaptured).toBe(order.total);
      expect(order.shipment).not.toBeNull();
    }
    const runs = await Promise.all(eventIds.map((eventId) => h.runsOfEvent(eventId)));
    expect(runs.map((list) => list.length)).toEqual(eventIds.map(() => 1));
    expect(await h.stockOf("OUTAGE-1")).toBe(100 - orderCount);
  });
});
