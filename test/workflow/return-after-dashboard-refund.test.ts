import Stripe from "stripe";
import { WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(180_000);

/**
 * A return received after the whole payment was refunded in the Stripe Dashboard, whose
 * `charge.refunded` webhook has not reached us yet (the harness gives the Stripe stand-in no
 * webhook URL, so its events are held back): Stripe refuses the return's refund because the money
 * is already back. The return settles on that answer: nothing more refunded by us, the return
 * closed with a timeline entry saying so, the order's refunded total brought up to Stripe's, ops
 * told once (keyed by the return). Never a second refund, never a run retrying until it fails.
 */
describe("a return received after a full refund in the Stripe Dashboard", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { RETURN_RESTOCKING_FEE: "0", RETURN_WINDOW: "30d" } });
    await h.addProduct("DASH-1", 20, 2000);
  });
  afterAll(() => h.close());

  const refundsAtStripe = (paymentIntentId: string) => h.refundsAtStripe(paymentIntentId);
  const alertsAbout = (pattern: RegExp) => h.alertsAbout(pattern);
  const deliveredOrder = (customerId: string) =>
    h.deliveredOrder(customerId, [{ sku: "DASH-1", quantity: 3 }]);

  const returnDelivered = (orderId: string) => h.returnDelivered(orderId, [{ sku: "DASH-1", quantity: 2 }]);

  it("the stand-in refuses a refund of a fully refunded charge as Stripe does", async () => {
    const { paymentIntentId } = await h.createPaidOrder({
      customerId: "cus_dash_sandbox",
      items: [{ sku: "DASH-1", quantity: 1 }],
      outcome: "paid",
    });
    await h.services.stripe.refunds.create({ payment_intent: paymentIntentId });
    const refused = await h.services.stripe.refunds
      .create({ payment_intent: paymentIntentId, amount: 100 })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect((refused as Stripe.errors.StripeInvalidRequestError).code).toBe("charge_already_refunded");
    expect(await refundsAtStripe(paymentIntentId)).toHaveLength(1);
  });

  it("the return closes on Stripe's refusal: no second refund, the records brought up to Stripe's, ops told once", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_dash_full");
    // The Dashboard's full refund, through the official client against the stand-in; its
    // `refund.created` / `charge.refunded` events go nowhere (no webhook URL): our records are
    // not told.
    const dashboard = await h.services.stripe.refunds.create({ payment_intent: paymentIntentId });
    expect(dashboard.amount).toBe(6000);
    expect((await h.order(orderId)).payment?.amountRefunded).toBe(0);

    const returnId = await returnDelivered(orderId);

    const done = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(done.status).toBe("closed");
    expect(done.refundAmount).toBe(0);
    // Never a second refund: Stripe holds the Dashboard's one only, we hold no refund of ours.
    expect((await refundsAtStripe(paymentIntentId)).map((refund) => refund.id)).toEqual([dashboard.id]);
    expect(await h.db.refund.count({ where: { orderId, status: "succeeded", providerId: null } })).toBe(0);
    const order = await h.order(orderId);
    expect(order.payment?.amountRefunded).toBe(6000);
    expect(order.payment?.status).toBe("refunded");
    const atStripe = order.timeline.filter((entry) => entry.kind === "return-refunded-at-stripe");
    expect(atStripe).toHaveLength(1);
    expect(atStripe[0]?.detail).toMatchObject({ returnId, due: 4000, refundedAtStripe: 6000 });
    expect(order.timeline.map((entry) => entry.kind)).not.toContain("return-refunded");

    // The run ended, once: no retries left to fail.
    // (This file's only return: the engine's process-return runs are this return's.)
    const runs = await h.runsOfFunction("process-return");
    expect(runs.map((run) => run.status)).toEqual(["Completed"]);

    // Ops told once, keyed by the return, though the refusal could be met again.
    await h.settle(1);
    const told = alertsAbout(/already refunded at Stripe/);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(returnId);
  });

  it("refunded in part at the Dashboard, the return asking more than is left: what is left is refunded, the shortfall told once", async () => {
    const { orderId, paymentIntentId } = await deliveredOrder("cus_dash_part");
    const dashboard = await h.services.stripe.refunds.create({
      payment_intent: paymentIntentId,
      amount: 5000,
    });
    expect((await h.order(orderId)).payment?.amountRefunded).toBe(0);

    const returnId = await returnDelivered(orderId);

    const done = await h.db.return.findUniqueOrThrow({ where: { id: returnId } });
    expect(done.status).toBe("closed");
    // Stripe refused the return's 4000 (amount_too_large): the 1000 still refundable went back.
    expect(done.refundAmount).toBe(1000);
    const atStripeRefunds = await refundsAtStripe(paymentIntentId);
    expect(atStripeRefunds.map((refund) => refund.id)).toContain(dashboard.id);
    expect(atStripeRefunds.map((refund) => refund.amount).sort()).toEqual([1000, 5000]);
    const order = await h.order(orderId);
    expect(order.payment?.amountRefunded).toBe(6000);
    expect(order.payment?.status).toBe("refunded");
    const atStripe = order.timeline.filter((entry) => entry.kind === "return-refunded-at-stripe");
    expect(atStripe.map((entry) => entry.detail)).toEqual([
      expect.objectContaining({
        returnId,
        due: 4000,
        refundedAtStripe: 5000,
        stripeCode: "amount_too_large",
        refunded: 1000,
        shortfall: 3000,
      }),
    ]);
    expect(
      order.timeline.filter((entry) => entry.kind === "return-refunded").map((entry) => entry.detail),
    ).toEqual([expect.objectContaining({ returnId, amount: 1000, due: 4000 })]);
    expect((await h.runsOfFunction("process-return")).map((run) => run.status)).toEqual([
      "Completed",
      "Completed",
    ]);
    await h.settle(1);
    expect(
      alertsAbout(/already refunded in part at Stripe/).filter((body) => body.includes(returnId)),
    ).toHaveLength(1);
  });
});
