import type Stripe from "stripe";
import { fixtureEvent, fixtureSession, IntakeHarness, payloadOf } from "./intake-harness";
import { defined } from "../support/defined";

const fourDaysMs = 4 * 24 * 60 * 60 * 1000;

describe("Stripe webhook intake", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start();
  });
  afterAll(() => h.close());

  /** An order whose customer has paid on Stripe's side, with the webhook not yet delivered. */
  async function authorizedOrder(sku = "MUG") {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku, quantity: 1 }]);
    const { paymentIntent } = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      deliver: false,
    });
    const event = fixtureEvent(
      "checkout.session.completed",
      fixtureSession({
        id: checkoutSessionId,
        client_reference_id: orderId,
        status: "complete",
        payment_status: "unpaid",
        payment_intent: defined(paymentIntent).id,
        amount_total: 1200,
        currency: "usd",
        metadata: { orderId, customerId: "cus-ada" },
      }),
    );
    return {
      orderId,
      checkoutSessionId,
      paymentIntentId: defined(paymentIntent).id,
      event,
      payload: payloadOf(event),
    };
  }

  const storedEvents = (id: string) => h.db.stripeEvent.count({ where: { id } });
  const placedSends = (orderId: string) =>
    h.eventApi.received.filter((event) => event.id === `order-placed-${orderId}`).length;

  it("accepts a signed checkout.session.completed, moves the order and announces it once", async () => {
    const { orderId, paymentIntentId, event, payload } = await authorizedOrder();
    const res = await h.deliver(payload);
    expect(res).toMatchObject({
      status: 200,
      body: { received: true, outcome: "processed", orderId, announced: true },
    });

    const order = await h.order(orderId);
    expect(order).toMatchObject({ status: "authorized", paymentIntentId });
    expect(order.placedEventSentAt).toBeInstanceOf(Date);
    expect(await h.db.stripeEvent.findUnique({ where: { id: event.id } })).toMatchObject({
      orderId,
      type: event.type,
      processedAt: expect.any(Date),
    });
    expect(h.placedEvents(orderId)).toEqual([
      expect.objectContaining({
        name: "shop/order.placed",
        id: `order-placed-${orderId}`,
        data: {
          orderId,
          customerId: "cus-ada",
          email: "ada@example.com",
          total: 1200,
          currency: "usd",
          paymentIntentId,
          fulfilmentKey: orderId,
        },
      }),
    ]);
  });

  it("rejects a missing or wrong signature, a tampered body, a stale timestamp and an oversized body, storing nothing", async () => {
    const { orderId, event, payload } = await authorizedOrder();
    const requestsBefore = h.eventApi.requests;
    const tampered = payload.replace('"payment_status": "unpaid"', '"payment_status": "paid"');
    expect(tampered).not.toBe(payload);
    const staleTimestamp = Math.floor(Date.now() / 1000) - 301;
    const bigEvent = fixtureEvent(event.type, {
      ...(event.data.object as object),
      padding: "x".repeat(1024 * 1024),
    });

    const attempts = [
      await h.deliver(payload, { signature: null }),
      await h.deliver(payload, { secret: "whsec_someone_else" }),
      await h.deliver(payload, { signature: "t=123,v1=deadbeef" }),
      await h.deliver(tampered, { signature: await signed(payload) }),
      await h.deliver(payload, { timestamp: staleTimestamp }),
      await h.deliver(payloadOf(bigEvent)),
    ];
    expect(attempts.map((a) => [a.status, (a.body.error as { code: string }).code])).toEqual([
      [400, "invalid_signature"],
      [400, "invalid_signature"],
      [400, "invalid_signature"],
      [400, "invalid_signature"],
      [400, "invalid_signature"],
      [413, "payload_too_large"],
    ]);
    expect(await storedEvents(event.id)).toBe(0);
    expect(await storedEvents(bigEvent.id)).toBe(0);
    expect(await h.order(orderId)).toMatchObject({
      status: "pending",
      placedEventSentAt: null,
      paymentIntentId: null,
    });
    expect(h.eventApi.requests).toBe(requestsBefore);
  });

  it("emits exactly one shop/order.placed for five concurrent deliveries and one four days later", async () => {
    const { orderId, event, payload } = await authorizedOrder();
    const results = await Promise.all(Array.from({ length: 5 }, () => h.deliver(payload)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(results.filter((r) => r.body.outcome === "processed")).toHaveLength(1);
    expect(results.filter((r) => r.body.announced === true)).toHaveLength(1);

    // Past Inngest's 24-hour deduplication window only our own record can stop a second event,
    // so the late redelivery goes to another instance (or a restarted one) that remembers nothing.
    h.eventApi.advance(fourDaysMs);
    const late = await h.deliver(payload, { to: await h.anotherInstance() });
    expect(late).toMatchObject({ status: 200, body: { outcome: "duplicate", orderId, announced: false } });
    expect(await h.deliver(payload)).toMatchObject({
      status: 200,
      body: { outcome: "duplicate", announced: false },
    });

    expect(h.placedEvents(orderId)).toHaveLength(1);
    expect(placedSends(orderId)).toBe(1);
    expect(await storedEvents(event.id)).toBe(1);
    const order = await h.order(orderId);
    expect(order.timeline.filter((entry) => entry.kind === "payment-authorized")).toHaveLength(1);
  });

  it("counts on an event API that, like Inngest, drops a repeated id for 24 hours only", async () => {
    const send = () =>
      fetch(`${h.eventApi.url}/e/key`, {
        method: "POST",
        body: JSON.stringify([{ name: "test/probe", id: "probe-1", data: {} }]),
      });
    await send();
    await send();
    h.eventApi.advance(25 * 60 * 60 * 1000);
    await send();
    expect(h.eventApi.accepted.filter((event) => event.id === "probe-1")).toHaveLength(2);
  });

  it("answers 503 inngest_unavailable when the event cannot be emitted, and Stripe's retry emits it exactly once", async () => {
    const { orderId, event, payload } = await authorizedOrder();
    h.eventApi.down = true;
    let failed;
    try {
      failed = await h.deliver(payload);
    } finally {
      h.eventApi.down = false;
    }
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ error: { code: "inngest_unavailable" } });
    // The payment is on record (committed first); only the announcement is owed.
    expect(await h.order(orderId)).toMatchObject({ status: "authorized", placedEventSentAt: null });
    expect(await storedEvents(event.id)).toBe(1);
    expect(h.placedEvents(orderId)).toHaveLength(0);

    const retry = await h.deliver(payload);
    expect(retry).toMatchObject({ status: 200, body: { outcome: "duplicate", announced: true } });
    expect(await h.order(orderId)).toMatchObject({
      status: "authorized",
      placedEventSentAt: expect.any(Date),
    });
    const again = await h.deliver(payload);
    expect(again).toMatchObject({ status: 200, body: { announced: false } });
    expect(h.placedEvents(orderId)).toHaveLength(1);
    expect(placedSends(orderId)).toBe(1);
    expect(await storedEvents(event.id)).toBe(1);
  });

  async function signed(payload: string): Promise<string> {
    const { default: StripeLib } = await import("stripe");
    return StripeLib.webhooks.generateTestHeaderString({
      payload,
      secret: "whsec_intake_test_secret_0123456789",
    });
  }

  describe("delayed payments, in any order", () => {
    /** `settle()` pays (or fails) on Stripe's side; each returns the event payloads it produced. */
    async function asyncOrder(succeeded: boolean) {
      const { orderId, checkoutSessionId } = await h.checkout([{ sku: "TEE", quantity: 1 }]);
      const pick = (events: Stripe.Event[], type: string) =>
        payloadOf(defined(events.find((e) => e.type === type)));
      const completed = await h.sandbox.completeCheckoutSession(checkoutSessionId, "async_pending", {
        deliver: false,
      });
      return {
        orderId,
        completed: pick(completed.events, "checkout.session.completed"),
        async settle() {
          const settled = await h.sandbox.settleAsyncPayment(checkoutSessionId, succeeded, {
            deliver: false,
          });
          return pick(
            settled.events,
            succeeded ? "checkout.session.async_payment_succeeded" : "checkout.session.async_payment_failed",
          );
        },
      };
    }

    async function finalState(orderId: string) {
      const order = await h.order(orderId);
      return {
        status: order.status,
        announced: order.placedEventSentAt !== null,
        placed: h.placedEvents(orderId).length,
      };
    }

    it("ends paid and announced once whether the success comes before or after completion, repeats included", async () => {
      const clean = await asyncOrder(true);
      await h.deliver(clean.completed);
      expect((await h.order(clean.orderId)).status).toBe("payment_processing");
      await h.deliver(await clean.settle());

      const reversed = await asyncOrder(true);
      const succeeded = await reversed.settle();
      for (const payload of [succeeded, reversed.completed, succeeded, reversed.completed]) {
        expect((await h.deliver(payload)).status).toBe(200);
      }
      expect(await finalState(clean.orderId)).toEqual({ status: "paid", announced: true, placed: 1 });
      expect(await finalState(reversed.orderId)).toEqual(await finalState(clean.orderId));
    });

    it("ends payment_failed, never announced, in either order", async () => {
      const clean = await asyncOrder(false);
      await h.deliver(clean.completed);
      await h.deliver(await clean.settle());
      const reversed = await asyncOrder(false);
      await h.deliver(await reversed.settle());
      await h.deliver(reversed.completed);
      expect(await finalState(clean.orderId)).toEqual({
        status: "payment_failed",
        announced: false,
        placed: 0,
      });
      expect(await finalState(reversed.orderId)).toEqual(await finalState(clean.orderId));
    });
  });

  it("expires a pending order when its Checkout Session expires (sandbox delivery)", async () => {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku: "MUG", quantity: 1 }]);
    const { deliveries } = await h.sandbox.expireCheckoutSession(checkoutSessionId);
    expect(deliveries.map((d) => [d.type, d.status])).toEqual([["checkout.session.expired", 200]]);
    expect((await h.order(orderId)).status).toBe("expired");
  });

  it("records a card declined at checkout on the order's timeline; the order stays pending for a retry", async () => {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku: "MUG", quantity: 1 }]);
    const declined = await h.sandbox.completeCheckoutSession(checkoutSessionId, "declined", {
      declineCode: "insufficient_funds",
    });
    const failure = declined.deliveries.find((d) => d.type === "payment_intent.payment_failed");
    expect(failure?.status).toBe(200);
    const order = await h.order(orderId);
    expect(order.status).toBe("pending");
    const entries = order.timeline.filter((entry) => entry.kind === "checkout-payment-declined");
    expect(entries).toHaveLength(1);
    expect(entries[0]?.detail).toMatchObject({ code: "card_declined", declineCode: "insufficient_funds" });

    // A redelivery records nothing more.
    const eventId = defined(failure).eventId;
    await h.sandbox.redeliver(eventId);
    const again = await h.order(orderId);
    expect(again.timeline.filter((entry) => entry.kind === "checkout-payment-declined")).toHaveLength(1);
  });

  it("flags an authorized order for ops when its authorization expires before capture", async () => {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku: "MUG", quantity: 1 }]);
    const completed = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized");
    expect(completed.deliveries.every((d) => d.status === 200)).toBe(true);
    expect((await h.order(orderId)).status).toBe("authorized");

    const expired = await h.sandbox.expireAuthorization(defined(completed.paymentIntent).id);
    expect(expired.deliveries.every((d) => d.status === 200)).toBe(true);
    const order = await h.order(orderId);
    expect(order.status).toBe("authorized");
    expect(order.attentionReason).toMatch(/expired before it was captured/);
    expect(order.timeline.map((entry) => entry.kind)).toContain("authorization-lost");
  });

  it("answers 200 to events for orders it does not know, and to types it does not handle, storing nothing", async () => {
    const unknown = fixtureEvent(
      "checkout.session.completed",
      fixtureSession({ id: "cs_test_nobody", payment_status: "unpaid", payment_intent: "pi_not_ours" }),
    );
    const res = await h.deliver(payloadOf(unknown));
    expect(res).toMatchObject({ status: 200, body: { outcome: "unknown-order" } });
    expect(
      h.warnings.some((line) => line.includes("order we do not know") && line.includes(unknown.id)),
    ).toBe(true);

    const other = fixtureEvent("customer.created", { id: "cus_123", object: "customer" });
    expect(await h.deliver(payloadOf(other))).toMatchObject({ status: 200, body: { outcome: "ignored" } });
    expect(await storedEvents(unknown.id)).toBe(0);
    expect(await storedEvents(other.id)).toBe(0);
  });
});
