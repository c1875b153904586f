import { engineCheckpointing } from "../support/env";
import { E2eHarness } from "./e2e-harness";

// Up to the e-mail lease's two minutes more when a kill lands in an SMTP exchange (see below).
jest.setTimeout(480_000);

const day = 24 * 3600 * 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("end to end: crashes", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    h = await E2eHarness.start();
    await h.addProduct("E2E-CRASH", 200, 1000);
  });
  afterAll(() => h.close());

  it("completes 24 orders across repeated SIGKILLs of the app, with no capture, shipment or e-mail twice", async () => {
    const orders = await Promise.all(
      Array.from({ length: 24 }, (_, i) => h.checkout(`cus_crash_${i}`, [{ sku: "E2E-CRASH", quantity: 1 }])),
    );
    const completions = Promise.all(
      orders.map((o) => h.sandbox.completeCheckoutSession(o.checkoutSessionId, "authorized")),
    );

    // Kill the app at random moments while webhooks and steps are in flight, then restart it.
    for (let kill = 0; kill < 4; kill++) {
      await sleep(150 + Math.floor(Math.random() * 500));
      await h.app.stop("SIGKILL");
      await h.startApp();
    }
    await completions;

    await h.eventually(async () => {
      const shipped = await h.db.order.count({
        where: { id: { in: orders.map((o) => o.orderId) }, status: "shipped" },
      });
      expect(shipped).toBe(orders.length);
    }, 90_000);
    // Every run is now waiting for its delivery event; the 14-day timeout counts from there.
    await h.engine.drain();
    await h.engine.clock.advance(15 * day);
    await h.eventually(async () => {
      const completed = await h.db.order.count({
        where: { id: { in: orders.map((o) => o.orderId) }, status: "completed" },
      });
      expect(completed).toBe(orders.length);
    }, 60_000);

    for (const { orderId } of orders) {
      const order = await h.order(orderId);
      const captures = h
        .stripeCalls("payment_intents.capture")
        .filter((c) => c.status === 200 && !c.replayed && c.path.includes(order.paymentIntentId ?? "-"));
      expect(captures).toHaveLength(1);
      expect(await h.db.shipment.count({ where: { orderId } })).toBe(1);
      // One EasyPost label per order, however the kills fell.
      expect(h.easyPost.purchased().filter((s) => s.reference === `order-${orderId}`)).toHaveLength(1);
      expect(order.reservations).toHaveLength(1);
      // The order reads `completed` once its last step committed; the run itself finishes a moment
      // later, when the engine records the function's result: poll for that state.
      await h.eventually(async () => {
        const runs = await h.runsOfEvent(`order-placed-${orderId}`);
        expect(runs.filter((run) => run.status === "Completed")).toHaveLength(1);
      });
    }
    // What a receiver keeps: messages deduplicated by Message-ID (the documented crash window). A
    // kill during an SMTP exchange leaves that e-mail leased for two minutes (on the app's clock);
    // the step's next attempt answers `queued` and the run goes on, and the outbox's drain sends
    // it once the lease has run out: poll for that, up to the lease and two drains.
    await h.eventually(async () => {
      for (const { orderId } of orders) {
        for (const key of [`shipped-${orderId}`, `review-${orderId}`]) {
          const copies = h.smtp.accepted.filter((m) => m.messageId === `<${key}@shop.example>`);
          expect(copies.length).toBeGreaterThanOrEqual(1);
          expect(new Set(copies.map((m) => m.messageId)).size).toBe(1);
        }
      }
    }, 200_000);
    expect((await h.db.product.findUniqueOrThrow({ where: { sku: "E2E-CRASH" } })).stockOnHand).toBe(
      200 - orders.length,
    );
    // In the checkpointing project the kills landed in checkpointing requests.
    if (engineCheckpointing) expect(h.engine.stats().checkpoints).toBeGreaterThan(orders.length);
    else expect(h.engine.stats().checkpoints).toBe(0);
    const copiesSent = h.smtp.accepted.filter((m) => /@shop\.example>$/.test(m.messageId ?? "")).length;
    // Sent twice only if a kill landed between the SMTP server's acceptance and our record of it.
    expect(copiesSent).toBeLessThanOrEqual(orders.length * 2 + 4);
  });
});

describe("end to end: one order per customer at a time", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    // The first calls of all four customers are held until each has one in flight: the others
    // then certainly run side by side, and a second run of cus_same sent meanwhile would overlap.
    h = await E2eHarness.start({
      observeCalls: { holdUntilArrived: ["cus_same", "cus_other_0", "cus_other_1", "cus_other_2"] },
    });
    await h.addProduct("E2E-CONC", 100, 1000);
  });
  afterAll(() => h.close());

  it("never overlaps the steps of two orders of one customer, while different customers run side by side", async () => {
    const same = await Promise.all(
      [0, 1].map(() => h.checkout("cus_same", [{ sku: "E2E-CONC", quantity: 1 }])),
    );
    const others = await Promise.all(
      [0, 1, 2].map((i) => h.checkout(`cus_other_${i}`, [{ sku: "E2E-CONC", quantity: 1 }])),
    );
    await Promise.all(
      [...same, ...others].map((o) => h.sandbox.completeCheckoutSession(o.checkoutSessionId, "authorized")),
    );
    await h.eventually(async () => {
      const ids = [...same, ...others].map((o) => o.orderId);
      expect(await h.db.order.count({ where: { id: { in: ids }, status: "shipped" } })).toBe(ids.length);
    });

    // A checkpointing call ends after the step that ships; let every call finish first.
    await h.engine.drain();
    const calls = h.proxy?.calls ?? [];
    const overlaps = (a: { startedAt: number; endedAt: number }, b: { startedAt: number; endedAt: number }) =>
      a.startedAt < b.endedAt && b.startedAt < a.endedAt;
    const sameCustomer = calls.filter((c) => c.customerId === "cus_same");
    expect(new Set(sameCustomer.map((c) => c.runId)).size).toBe(2);
    const [runA, runB] = [...new Set(sameCustomer.map((c) => c.runId))];
    const callsA = sameCustomer.filter((c) => c.runId === runA);
    const callsB = sameCustomer.filter((c) => c.runId === runB);
    // Classic: one call per step; checkpointing: the steps up to the wait run inside one call.
    expect(callsA.length).toBeGreaterThanOrEqual(engineCheckpointing ? 1 : 5);
    expect(callsA.some((a) => callsB.some((b) => overlaps(a, b)))).toBe(false);

    const otherCustomers = calls.filter((c) => c.customerId?.startsWith("cus_other_"));
    const crossOverlap = otherCustomers.some((a) =>
      otherCustomers.some((b) => a.customerId !== b.customerId && overlaps(a, b)),
    );
    expect(crossOverlap).toBe(true);
  });
});
