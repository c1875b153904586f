import { defined } from "../support/defined";
import {
  checkoutFactsOf,
  ownershipProblems,
  type OrderTerms,
} from "../../src/orders/intake/stripe-event-plan";
import {
  fixtureEvent,
  fixturePaymentIntent,
  fixtureSession,
  IntakeHarness,
  payloadOf,
} from "./intake-harness";

/**
 * Before an order is placed, the intake checks with Stripe that the session and PaymentIntent belong to it
 * and match its amount and currency; a mismatch flags the order for ops instead of shipping it. Signed
 * webhooks built from Stripe's fixture objects, delivered to the service as Stripe would.
 */
describe("the intake checks amounts and ownership before placing an order", () => {
  let h: IntakeHarness;
  beforeAll(async () => {
    h = await IntakeHarness.start();
  });
  afterAll(() => h.close());

  /** An order whose customer completed the Checkout Session at Stripe; no webhook delivered yet. */
  async function completedOrder(sku: string, quantity: number, customerId: string) {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku, quantity }], customerId);
    const { paymentIntent } = await h.sandbox.completeCheckoutSession(checkoutSessionId, "authorized", {
      deliver: false,
    });
    return { orderId, checkoutSessionId, paymentIntentId: defined(paymentIntent).id };
  }

  const completedEvent = (
    orderId: string,
    checkoutSessionId: string,
    paymentIntentId: string,
    amount: number,
    currency: string,
  ) =>
    fixtureEvent(
      "checkout.session.completed",
      fixtureSession({
        id: checkoutSessionId,
        client_reference_id: orderId,
        status: "complete",
        payment_status: "unpaid",
        payment_intent: paymentIntentId,
        amount_total: amount,
        currency,
        metadata: { orderId },
      }),
    );

  it("flags order A for ops, and does not place it, when a signed checkout.session.completed carries order B's PaymentIntent (another amount and currency)", async () => {
    const a = await completedOrder("TEE", 2, "cus-victim"); // 5,000 usd
    const b = await completedOrder("EURO-BAG", 1, "cus-attacker"); // 900 eur
    const forged = completedEvent(a.orderId, a.checkoutSessionId, b.paymentIntentId, 900, "eur");

    const res = await h.deliver(payloadOf(forged));
    expect(res).toMatchObject({ status: 200, body: { orderId: a.orderId, announced: false } });

    const order = await h.order(a.orderId);
    expect(order.status).toBe("pending");
    expect(order.paymentIntentId).toBeNull();
    expect(order.attentionReason).toMatch(/does not match/);
    expect(order.attentionReason).toContain(b.paymentIntentId);
    const mismatch = order.timeline.find((entry) => entry.kind === "payment-mismatch");
    expect(mismatch?.detail).toMatchObject({ stripeEvent: forged.id });
    expect(h.placedEvents(a.orderId)).toHaveLength(0);
    const alert = h.alerts.find((notice) => notice.fields.orderId === a.orderId);
    expect(alert?.title).toMatch(/does not match/);
    expect(String(alert?.fields.problems)).toContain(b.paymentIntentId);

    // A redelivery of the forgery changes nothing and alerts no more.
    const alertsBefore = h.alerts.length;
    expect(await h.deliver(payloadOf(forged))).toMatchObject({ status: 200, body: { outcome: "duplicate" } });
    expect(h.alerts.length).toBe(alertsBefore);

    // Stripe's own, genuine event still places A: the check is against Stripe, not the payload.
    const genuine = completedEvent(a.orderId, a.checkoutSessionId, a.paymentIntentId, 5000, "usd");
    expect(await h.deliver(payloadOf(genuine))).toMatchObject({ status: 200, body: { announced: true } });
    expect(await h.order(a.orderId)).toMatchObject({
      status: "authorized",
      paymentIntentId: a.paymentIntentId,
    });
  });

  it("flags an order whose payment at Stripe is not for the order's amount", async () => {
    const { orderId, checkoutSessionId, paymentIntentId } = await completedOrder("MUG", 1, "cus-amount");
    // The order says 5,500; Stripe's session and PaymentIntent say 1,200.
    await h.db.order.update({ where: { id: orderId }, data: { total: 5500 } });
    const res = await h.deliver(
      payloadOf(completedEvent(orderId, checkoutSessionId, paymentIntentId, 1200, "usd")),
    );
    expect(res).toMatchObject({ status: 200, body: { announced: false } });
    const order = await h.order(orderId);
    expect(order.status).toBe("pending");
    expect(order.attentionReason).toMatch(/amount is 1200, the order's total 5500/);
    expect(h.placedEvents(orderId)).toHaveLength(0);
    expect(h.alerts.some((notice) => notice.fields.orderId === orderId)).toBe(true);
  });

  it("verifies checkout.session.async_payment_succeeded with Stripe rather than trusting it", async () => {
    const { orderId, checkoutSessionId } = await h.checkout([{ sku: "TEE", quantity: 1 }], "cus-async");
    const completed = await h.sandbox.completeCheckoutSession(checkoutSessionId, "async_pending");
    expect(completed.deliveries.every((d) => d.status === 200)).toBe(true);
    expect((await h.order(orderId)).status).toBe("payment_processing");
    const intentId = defined(completed.paymentIntent).id;

    // Signed, well-formed, and false: the bank transfer has not cleared at Stripe.
    const claim = fixtureEvent(
      "checkout.session.async_payment_succeeded",
      fixtureSession({
        id: checkoutSessionId,
        client_reference_id: orderId,
        status: "complete",
        payment_status: "paid",
        payment_intent: intentId,
        amount_total: 2500,
        currency: "usd",
        metadata: { orderId },
      }),
    );
    const res = await h.deliver(payloadOf(claim));
    expect(res).toMatchObject({ status: 200, body: { outcome: "ignored", announced: false } });
    expect((await h.order(orderId)).status).toBe("payment_processing");
    expect(h.placedEvents(orderId)).toHaveLength(0);
    const retrieves = h.sandbox.requests.filter(
      (r) => r.endpoint === "checkout.sessions.retrieve" && r.path.includes(checkoutSessionId),
    );
    expect(retrieves.length).toBeGreaterThan(0);

    // When it does clear, Stripe's event places the order.
    const settled = await h.sandbox.settleAsyncPayment(checkoutSessionId, true);
    expect(settled.deliveries.every((d) => d.status === 200)).toBe(true);
    expect((await h.order(orderId)).status).toBe("paid");
    expect(h.placedEvents(orderId)).toHaveLength(1);
  });

  describe("the checks, on Stripe's fixture objects", () => {
    const order: OrderTerms = {
      orderId: "4f0c1f53-0b4e-4c53-9a3b-2f4f8c1e9d10",
      total: 5500,
      currency: "usd",
    };
    const intent = fixturePaymentIntent({
      id: "pi_ours",
      status: "requires_capture",
      amount: 5500,
      currency: "usd",
      metadata: { orderId: order.orderId },
    });
    const session = (overrides: Parameters<typeof fixtureSession>[0]) =>
      fixtureSession({
        id: "cs_ours",
        status: "complete",
        client_reference_id: order.orderId,
        metadata: { orderId: order.orderId },
        amount_total: 5500,
        currency: "usd",
        payment_intent: intent,
        ...overrides,
      });

    it("finds nothing wrong with the order's own session and PaymentIntent", () => {
      expect(ownershipProblems(order, checkoutFactsOf(session({})), "pi_ours")).toEqual([]);
    });

    it.each([
      ["another order's client_reference_id", { client_reference_id: "someone-else" }, /client_reference_id/],
      ["another order's metadata", { metadata: { orderId: "someone-else" } }, /session metadata.orderId/],
      ["another amount", { amount_total: 500 }, /amount_total is 500/],
      ["another currency", { currency: "eur" }, /session currency is eur/],
      ["a session still open", { status: "open" as const }, /session is open/],
      [
        "a PaymentIntent of another order",
        { payment_intent: { ...intent, metadata: { orderId: "someone-else" }, amount: 1, currency: "gbp" } },
        /PaymentIntent metadata.orderId.*PaymentIntent amount is 1.*PaymentIntent currency is gbp/,
      ],
    ])("flags %s", (_case, overrides, problem) => {
      const problems = ownershipProblems(order, checkoutFactsOf(session(overrides)), "pi_ours");
      expect(problems.join("; ")).toMatch(problem);
    });
  });
});
