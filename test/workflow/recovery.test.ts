import request from "supertest";
import { stripeEventsCheckpoint } from "../../src/inngest/functions/sweep-missed-webhooks";
import { refundEventTypes } from "../../src/orders/intake/refund-events";
import { riskEventTypes } from "../../src/orders/intake/risk-events";
import { sweptEventTypes } from "../../src/recovery";
import { defined } from "../support/defined";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(90_000);

const hour = 3600_000;

describe("recovery crons: stalled orders, missed webhooks, expiring authorizations", () => {
  let h: WorkflowHarness;

  /** Every recovery cron is due at least once in 6 hours; settling then finishes what they started. */
  const fireCrons = async (): Promise<void> => {
    await h.engine.clock.advance(6 * hour);
    await h.settle();
  };
  const backdate = (orderId: string, column: "updated_at" | "created_at", interval: string) =>
    h.db.$executeRawUnsafe(
      `UPDATE orders SET ${column} = now() - $1::interval WHERE id = $2::uuid`,
      interval,
      orderId,
    );
  const capturesOf = (orderId: string) =>
    h
      .stripeCalls("payment_intents.capture")
      .filter((call) => call.status === 200 && call.idempotencyKey === `capture-${orderId}`);
  const kindsOf = async (orderId: string) => (await h.order(orderId)).timeline.map((entry) => entry.kind);

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("RECOVER-1", 50);
  });
  afterAll(() => h.close());

  it("re-emits shop/order.placed for an order stalled 15 minutes, and leaves fresh and fulfilled ones alone", async () => {
    const items = [{ sku: "RECOVER-1", quantity: 1 }];
    const stalled = await h.createPaidOrder({ customerId: "cus_stalled", items });
    const fresh = await h.createPaidOrder({ customerId: "cus_fresh", items });
    const fulfilled = await h.createPaidOrder({ customerId: "cus_done", items });
    await h.placeOrder(fulfilled.orderId);
    await h.settle(2);
    expect((await h.order(fulfilled.orderId)).status).toBe("shipped");

    await backdate(stalled.orderId, "updated_at", "20 minutes");
    await backdate(fresh.orderId, "updated_at", "1 minute");
    await backdate(fulfilled.orderId, "updated_at", "20 minutes");
    await fireCrons();

    const recovered = await h.order(stalled.orderId);
    expect(recovered.status).toBe("shipped");
    expect(recovered.timeline.map((entry) => entry.kind)).toEqual(
      expect.arrayContaining(["recovery-re-emitted", "claimed", "payment-captured", "shipment-booked"]),
    );
    expect(await h.runsOfEvent(`order-placed-${stalled.orderId}-redrive-1`)).toHaveLength(1);
    expect(capturesOf(stalled.orderId)).toHaveLength(1);

    expect((await h.order(fresh.orderId)).status).toBe("authorized");
    expect(await kindsOf(fresh.orderId)).not.toContain("recovery-re-emitted");

    expect(capturesOf(fulfilled.orderId)).toHaveLength(1);
    expect(await kindsOf(fulfilled.orderId)).not.toContain("recovery-re-emitted");
  });

  it("recovers a checkout whose webhook never arrived through the Events API sweep, once", async () => {
    const checkout = await request(h.appUrl)
      .post("/api/checkout")
      .send({
        customerId: "cus_missed",
        email: "missed@example.com",
        items: [{ sku: "RECOVER-1", quantity: 2 }],
      })
      .expect(201);
    const { orderId, checkoutSessionId } = checkout.body as { orderId: string; checkoutSessionId: string };
    const completed = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      deliver: false,
    });
    expect(completed.deliveries).toHaveLength(0);
    expect((await h.order(orderId)).status).toBe("pending");

    await fireCrons();

    const order = await h.order(orderId);
    expect(order.status).toBe("shipped");
    expect(order.payment).toMatchObject({ status: "captured", amountCaptured: 5000 });
    expect(capturesOf(orderId)).toHaveLength(1);
    const eventIds = completed.events.map((event) => event.id);
    const recorded = await h.db.stripeEvent.findMany({ where: { id: { in: eventIds } } });
    expect(recorded.map((event) => event.type)).toContain("checkout.session.completed");

    const checkpoint = await h.db.recoveryCheckpoint.findUniqueOrThrow({
      where: { name: stripeEventsCheckpoint },
    });
    // The checkpoint now lies past the missed event: later sweeps start (with overlap) after it.
    const missedAt = defined(completed.events.at(-1), "event").created * 1000;
    expect(checkpoint.cursor.getTime()).toBeGreaterThanOrEqual(missedAt);
    const timelineBefore = order.timeline.length;

    await fireCrons();

    const again = await h.order(orderId);
    expect(again.status).toBe("shipped");
    expect(again.timeline).toHaveLength(timelineBefore);
    expect(capturesOf(orderId)).toHaveLength(1);
    const shippedMails = h.mailsTo(/on its way/).filter((mail) => mail.messageId?.includes(orderId));
    expect(shippedMails).toHaveLength(1);
    expect(await h.db.stripeEvent.count({ where: { orderId } })).toBe(recorded.length);
    const advanced = await h.db.recoveryCheckpoint.findUniqueOrThrow({
      where: { name: stripeEventsCheckpoint },
    });
    expect(advanced.cursor.getTime()).toBeGreaterThan(checkpoint.cursor.getTime());
  });

  it("lists every event type the webhook acts on, within the Events API's 20", () => {
    const swept: readonly string[] = sweptEventTypes;
    for (const type of [
      ...refundEventTypes,
      ...riskEventTypes,
      "payment_intent.canceled",
      "payment_intent.payment_failed",
    ]) {
      expect(swept).toContain(type);
    }
    expect(new Set(swept).size).toBe(swept.length);
    expect(swept.length).toBeLessThanOrEqual(20);
  });

  it("recovers a refund and a dispute whose webhooks never arrived, once each", async () => {
    const items = [{ sku: "RECOVER-1", quantity: 1 }];
    const paid = await h.createPaidOrder({ customerId: "cus_refund_missed", items });
    await h.placeOrder(paid.orderId);
    await h.settle(2);
    expect((await h.order(paid.orderId)).status).toBe("shipped");
    const paymentIntent = paid.paymentIntentId;

    const lost = await h.sandbox.refund({ paymentIntent, amount: 300 }, { deliver: false });
    const disputed = await h.sandbox.dispute({ paymentIntent, reason: "fraudulent" }, { deliver: false });
    expect([...lost.deliveries, ...disputed.deliveries]).toHaveLength(0);
    expect(await h.db.refund.count({ where: { orderId: paid.orderId } })).toBe(0);
    expect(await kindsOf(paid.orderId)).not.toContain("dispute-updated");

    await fireCrons();
    await fireCrons();

    const refunds = await h.db.refund.findMany({ where: { orderId: paid.orderId } });
    expect(refunds).toEqual([expect.objectContaining({ providerId: lost.refund.id, amount: 300 })]);
    const kinds = await kindsOf(paid.orderId);
    expect(kinds.filter((kind) => kind === "refund-recorded")).toHaveLength(1);
    // One timeline entry per dispute event Stripe holds (created, and the funds withdrawn).
    const disputeEvents = disputed.events.filter((event) => event.type.startsWith("charge.dispute."));
    expect(disputeEvents.length).toBeGreaterThan(0);
    expect(kinds.filter((kind) => kind === "dispute-updated")).toHaveLength(disputeEvents.length);
  });

  it("alerts once about an authorization that expires within 24 hours, however often the cron fires", async () => {
    const items = [{ sku: "RECOVER-1", quantity: 1 }];
    // Authorized but never announced: nothing fulfils them, so nothing captures the money.
    const old = await h.createPaidOrder({ customerId: "cus_old_auth", items });
    const recent = await h.createPaidOrder({ customerId: "cus_recent_auth", items });
    await backdate(old.orderId, "created_at", "6 days 12 hours");
    await backdate(recent.orderId, "created_at", "1 day");
    const slackBefore = h.slack.bodies.length;

    await fireCrons();
    await fireCrons();

    const alerts = h.slack.bodies.slice(slackBefore).map((body) => JSON.stringify(body));
    const expiring = alerts.filter((body) => body.includes("Authorization expiring without capture"));
    expect(expiring).toHaveLength(1);
    expect(expiring[0]).toContain(old.orderId);
    expect(alerts.filter((body) => body.includes(recent.orderId))).toHaveLength(0);
    expect(
      (await kindsOf(old.orderId)).filter((kind) => kind === "authorization-expiry-alerted"),
    ).toHaveLength(1);
    expect(await kindsOf(recent.orderId)).not.toContain("authorization-expiry-alerted");
  });
});
