import { adminToken, E2eHarness } from "./e2e-harness";

jest.setTimeout(180_000);

const hour = 3600 * 1000;

function shuffle<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe("end to end: exactly once under duplicates and failures", () => {
  let h: E2eHarness;

  beforeAll(async () => {
    h = await E2eHarness.start();
    await h.addProduct("E2E-DUP", 100, 1500);
  });
  afterAll(() => h.close());

  const succeededCaptures = (paymentIntentId: string) =>
    h
      .stripeCalls("payment_intents.capture")
      .filter((c) => c.status === 200 && !c.replayed && c.path.includes(paymentIntentId));

  it("fulfils each order once when every webhook arrives three times at once, shuffled, and again 25 virtual hours later", async () => {
    const orders: { orderId: string; eventIds: string[] }[] = [];
    for (let i = 0; i < 5; i++) {
      const { orderId, checkoutSessionId } = await h.checkout(`cus_dup_${i}`, [
        { sku: "E2E-DUP", quantity: 1 },
      ]);
      const completed = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
        deliver: false,
      });
      orders.push({ orderId, eventIds: completed.events.map((e) => e.id) });
    }
    const deliveries = shuffle(orders.flatMap((o) => o.eventIds.flatMap((id) => [id, id, id])));
    const first = await Promise.all(deliveries.map((id) => h.sandbox.redeliver(id)));
    expect(first.every((d) => d.status === 200)).toBe(true);

    await h.eventually(async () => {
      for (const { orderId } of orders) expect((await h.order(orderId)).status).toBe("shipped");
    });
    await h.engine.clock.advance(25 * hour);
    const late = await Promise.all(shuffle(deliveries).map((id) => h.sandbox.redeliver(id)));
    expect(late.every((d) => d.status === 200)).toBe(true);
    await h.engine.drain();

    for (const { orderId } of orders) {
      const runs = await h.runsOfEvent(`order-placed-${orderId}`);
      const order = await h.order(orderId);
      // A late duplicate run, if any, must have stopped at the claim.
      const fulfilling = runs.filter((run) => !(run.output as { skipped?: string } | null)?.skipped);
      expect(fulfilling).toHaveLength(1);
      expect(succeededCaptures(order.paymentIntentId ?? "")).toHaveLength(1);
      expect(await h.db.shipment.count({ where: { orderId } })).toBe(1);
      expect(order.timeline.filter((e) => e.kind === "claimed")).toHaveLength(1);
      expect(h.smtp.accepted.filter((m) => m.messageId === `<shipped-${orderId}@shop.example>`)).toHaveLength(
        1,
      );
    }
  });

  it("captures once when Stripe answers 500 twice, with one idempotency key", async () => {
    const { orderId, checkoutSessionId } = await h.checkout("cus_transient", [
      { sku: "E2E-DUP", quantity: 1 },
    ]);
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 2);
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");

    const order = await h.eventually(async () => {
      const current = await h.order(orderId);
      expect(current.status).toBe("shipped");
      return current;
    });
    const calls = h
      .stripeCalls("payment_intents.capture")
      .filter((c) => c.path.includes(order.paymentIntentId ?? "-"));
    expect(calls.map((c) => c.status)).toEqual([500, 500, 200]);
    expect(new Set(calls.map((c) => c.idempotencyKey))).toEqual(new Set([`capture-${orderId}`]));
  });

  it("compensates a declined capture and alerts ops exactly once", async () => {
    // Before checkout, which holds the stock: the compensation must give it all back.
    const stockBefore = (await h.db.product.findUniqueOrThrow({ where: { sku: "E2E-DUP" } })).stockOnHand;
    const { orderId, checkoutSessionId } = await h.checkout("cus_declined", [
      { sku: "E2E-DUP", quantity: 2 },
    ]);
    h.sandbox.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });
    await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");

    await h.eventually(async () => {
      const [run] = await h.runsOfEvent(`order-placed-${orderId}`);
      expect(run?.status).toBe("Failed");
      expect(h.slack.bodies).toHaveLength(1);
    });
    const order = await h.order(orderId);
    expect(order.status).toBe("payment_failed");
    expect((await h.db.product.findUniqueOrThrow({ where: { sku: "E2E-DUP" } })).stockOnHand).toBe(
      stockBefore,
    );
    expect(h.sandbox.paymentIntent(order.paymentIntentId ?? "")?.status).toBe("canceled");
    expect(
      h.smtp.accepted.filter((m) => m.messageId === `<payment-failed-${orderId}@shop.example>`),
    ).toHaveLength(1);
    expect(JSON.stringify(h.slack.bodies[0])).toContain(orderId);
  });

  it("cleans up after a cancellation inside the window, and refuses one after it", async () => {
    const cancel = (orderId: string) =>
      fetch(`${h.app.url}/api/orders/${orderId}/cancel`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: "{}",
      });

    const inside = await h.checkout("cus_cancel_inside", [{ sku: "E2E-DUP", quantity: 1 }]);
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 50);
    await h.sandbox.completeCheckoutSession(inside.checkoutSessionId, "authorized");
    await h.eventually(async () => expect((await h.order(inside.orderId)).status).toBe("fulfilling"));
    expect((await cancel(inside.orderId)).status).toBe(202);
    await h.eventually(async () => expect((await h.order(inside.orderId)).status).toBe("cancelled"));
    h.sandbox.clearFailures();
    const cancelled = await h.order(inside.orderId);
    expect(h.sandbox.paymentIntent(cancelled.paymentIntentId ?? "")?.status).toBe("canceled");
    expect(cancelled.reservations.every((r) => r.status === "released")).toBe(true);
    expect((await h.runsOfEvent(`order-placed-${inside.orderId}`))[0]?.status).toBe("Cancelled");

    const after = await h.checkout("cus_cancel_after", [{ sku: "E2E-DUP", quantity: 1 }]);
    h.sandbox.injectFailure("payment_intents.capture", { kind: "server_error" }, 50);
    await h.sandbox.completeCheckoutSession(after.checkoutSessionId, "authorized");
    await h.eventually(async () => expect((await h.order(after.orderId)).status).toBe("fulfilling"));
    await h.db.order.update({
      where: { id: after.orderId },
      data: { placedEventSentAt: new Date(Date.now() - 2 * hour) },
    });
    const before = await h.order(after.orderId);
    const refused = await cancel(after.orderId);
    expect(refused.status).toBe(409);
    const unchanged = await h.order(after.orderId);
    expect({ status: unchanged.status, cancelRequestedAt: unchanged.cancelRequestedAt }).toEqual({
      status: before.status,
      cancelRequestedAt: null,
    });
    h.sandbox.clearFailures();
  });
});
