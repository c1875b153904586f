import type Stripe from "stripe";
import { eventually, gate } from "../support/eventually";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(120_000);

/**
 * An ops refund raced against a cancel's cleanup refund (issue 37): the two together never refund
 * more than was captured, and the refund's record after Stripe's answer never undoes what the
 * cleanup recorded meanwhile. Stripe's refund is held open by the sandbox's `hang ... until`
 * (released by the test), the cancel lands inside that window.
 */
describe("an ops refund raced against a cancel's cleanup refund", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start();
    await h.addProduct("RFRACE-1", 100);
  });
  afterAll(() => h.close());

  const post = (path: string, body: unknown = {}) =>
    fetch(`${h.appUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const answerOf = async (res: Response) => ({ status: res.status, body: (await res.json()) as unknown });
  const labelByReference = (reference: string) =>
    h.easyPost.shipments().find((s) => s.reference === reference);

  /** What Stripe refunded of the payment, whoever asked. */
  const refundedAtStripe = (paymentIntentId: string) =>
    h.sandbox
      .events("refund.created")
      .map((event) => event.data.object as Stripe.Refund)
      .filter((refund) => refund.payment_intent === paymentIntentId)
      .reduce((sum, refund) => sum + refund.amount, 0);

  /** An order whose money is captured and whose label purchase is held open (its run in flight). */
  async function capturedInFlight(customerId: string) {
    const { orderId, paymentIntentId } = await h.createPaidOrder({
      customerId,
      items: [{ sku: "RFRACE-1", quantity: 1 }],
    });
    const label = gate();
    h.easyPost.injectFailure("shipments.buy", { kind: "held", until: label.promise, afterProcessing: true });
    await h.placeOrder(orderId);
    await eventually("label bought", () => labelByReference(`order-${orderId}`)?.postage_label != null);
    expect(h.sandbox.paymentIntent(paymentIntentId)?.amount_received).toBe(2500);
    return { orderId, paymentIntentId, label };
  }

  it("refunded at Stripe, its answer late: the cleanup refunds only what is left and the record keeps the whole of it", async () => {
    const { orderId, paymentIntentId, label } = await capturedInFlight("cus_rfrace_done");
    const stripeAnswer = gate();
    h.sandbox.injectFailure("refunds.create", {
      kind: "hang",
      afterProcessing: true,
      until: stripeAnswer.promise,
    });
    try {
      const refunded = post(`/api/orders/${orderId}/refund`, { amount: 1000, reason: "goodwill" }).then(
        answerOf,
      );
      await eventually("ops refund made at Stripe", () => refundedAtStripe(paymentIntentId) === 1000);
      expect((await post(`/api/orders/${orderId}/cancel`, { reason: "fraud" })).status).toBe(202);
      await eventually("cleanup done", async () => (await h.order(orderId)).status === "cancelled");
      stripeAnswer.open();
      label.open();
      const refund = await refunded;
      await h.settle();

      expect(refund.status).toBe(201);
      // Stripe refunded 1000 for ops and the 1500 left for the cleanup: never more than captured.
      expect(refundedAtStripe(paymentIntentId)).toBe(2500);
      const order = await h.order(orderId);
      expect(order.payment?.amountRefunded).toBe(2500);
      expect(order.payment?.status).toBe("refunded");
      expect(order.timeline.filter((e) => e.kind === "refund-over-captured")).toHaveLength(0);
    } finally {
      stripeAnswer.open();
      label.open();
      h.sandbox.clearFailures();
      h.easyPost.clearFailures();
    }
  });

  it("asked of Stripe after the cleanup refunded everything: refused (409), nothing written, never more than captured", async () => {
    const { orderId, paymentIntentId, label } = await capturedInFlight("cus_rfrace_late");
    const stripeAsked = gate();
    h.sandbox.injectFailure("refunds.create", { kind: "hang", until: stripeAsked.promise });
    try {
      const refunded = post(`/api/orders/${orderId}/refund`, { amount: 1000, reason: "goodwill" }).then(
        answerOf,
      );
      await eventually(
        "ops refund pending",
        async () => (await h.db.refund.count({ where: { orderId } })) === 1,
      );
      expect((await post(`/api/orders/${orderId}/cancel`, { reason: "fraud" })).status).toBe(202);
      await eventually("cleanup done", async () => (await h.order(orderId)).status === "cancelled");
      stripeAsked.open();
      label.open();
      const refund = await refunded;
      await h.settle();

      expect(refund.status).toBe(409);
      const order = await h.order(orderId);
      expect(order.payment?.amountRefunded).toBe(2500);
      expect(order.payment?.status).toBe("refunded");
      expect(
        await h.db.refund.count({ where: { orderId, status: { not: "failed" }, providerId: null } }),
      ).toBe(0);
      expect(refundedAtStripe(paymentIntentId)).toBe(2500);
    } finally {
      stripeAsked.open();
      label.open();
      h.sandbox.clearFailures();
      h.easyPost.clearFailures();
    }
  });
});
