import type Stripe from "stripe";
import type { StripeSandbox } from "../../../src/dev/stripe-sandbox";
import { sessionParams, startSandbox, startWebhookReceiver } from "./harness";

/** Balance transactions, refunds and disputes as stripe-node lists them, and their control routes. */
describe("Stripe stand-in: the account's ledger", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;
  let url: string;

  beforeAll(async () => {
    ({ sandbox, stripe, url } = await startSandbox({ retryDelaysMs: [] }));
  });
  afterAll(() => sandbox.close());

  async function paidPaymentIntent(): Promise<string> {
    const session = await stripe.checkout.sessions.create(
      sessionParams({ payment_intent_data: { capture_method: "automatic" } }),
    );
    const done = await sandbox.completeCheckoutSession(session.id, "paid", { deliver: false });
    return done.paymentIntent?.id as string;
  }

  it("books a charge with Stripe's fee and a refund, listed newest first with expanded sources", async () => {
    const paymentIntent = await paidPaymentIntent();
    const refund = await stripe.refunds.create({ payment_intent: paymentIntent, amount: 500 });
    const page = await stripe.balanceTransactions.list({
      limit: 100,
      expand: ["data.source"],
      created: { gte: Math.floor(Date.now() / 1000) - 60 },
    });
    const [refundTxn, chargeTxn] = page.data;
    expect(refundTxn).toMatchObject({ object: "balance_transaction", type: "refund", amount: -500, fee: 0 });
    expect((refundTxn?.source as Stripe.Refund).id).toBe(refund.id);
    expect(chargeTxn).toMatchObject({ type: "charge", amount: 3490, fee: 131, net: 3359, currency: "eur" });
    expect((chargeTxn?.source as Stripe.Charge).payment_intent).toBe(paymentIntent);
  });

  it("pages through balance transactions with stripe-node's auto-pagination", async () => {
    for (let i = 0; i < 3; i++) await paidPaymentIntent();
    const seen: string[] = [];
    for await (const transaction of stripe.balanceTransactions.list({ limit: 2 })) seen.push(transaction.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.length).toBeGreaterThanOrEqual(5);
  });

  it("lists refunds by PaymentIntent, and makes a Dashboard refund whose webhooks it can lose", async () => {
    const receiver = await startWebhookReceiver();
    sandbox.setWebhookUrl(receiver.url);
    try {
      const paymentIntent = await paidPaymentIntent();
      const response = await fetch(`${url}/_sandbox/refunds`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ payment_intent: paymentIntent, amount: 700, deliver: false }),
      });
      expect(response.status).toBe(201);
      const refunds = await stripe.refunds.list({ payment_intent: paymentIntent });
      expect(refunds.data).toEqual([expect.objectContaining({ amount: 700, status: "succeeded" })]);
      expect(receiver.received).toHaveLength(0);

      sandbox.dropDeliveries("refund.*");
      await stripe.refunds.create({ payment_intent: paymentIntent, amount: 100 });
      await sandbox.deliveriesSettled();
      const types = receiver.received.map((r) => (JSON.parse(r.body) as Stripe.Event).type);
      expect(types).toEqual(["charge.refunded"]);
    } finally {
      sandbox.setWebhookUrl(undefined);
      await receiver.close();
    }
  });

  it("opens a dispute that withdraws the amount and the fee, and lists it", async () => {
    const paymentIntent = await paidPaymentIntent();
    const { dispute } = await sandbox.dispute({ paymentIntent, reason: "product_not_received" });
    expect(dispute).toMatchObject({ status: "needs_response", amount: 3490, payment_intent: paymentIntent });
    expect(dispute.evidence_details.due_by).toBeGreaterThan(dispute.created);
    const listed = await stripe.disputes.list({ payment_intent: paymentIntent });
    expect(listed.data.map((d) => d.id)).toEqual([dispute.id]);
    const withdrawal = await stripe.balanceTransactions.list({ source: dispute.id } as never);
    expect(withdrawal.data[0]).toMatchObject({ type: "adjustment", amount: -3490, fee: 1500 });
    expect(await stripe.disputes.retrieve(dispute.id)).toMatchObject({
      id: dispute.id,
      is_charge_refundable: false,
    });
    await expect(stripe.disputes.retrieve("dp_never_opened")).rejects.toMatchObject({
      code: "resource_missing",
    });
  });

  it("refuses a refund of a charged-back charge with charge_disputed, and refunds it once the shop won", async () => {
    const paymentIntent = await paidPaymentIntent();
    const { dispute } = await sandbox.dispute({ paymentIntent });
    await expect(stripe.refunds.create({ payment_intent: paymentIntent, amount: 100 })).rejects.toMatchObject(
      {
        type: "StripeInvalidRequestError",
        code: "charge_disputed",
      },
    );
    await sandbox.closeDispute(dispute.id, "won");
    expect((await stripe.refunds.create({ payment_intent: paymentIntent, amount: 100 })).status).toBe(
      "succeeded",
    );
  });

  it("closes a dispute won (the amount reinstated, the fee kept) or lost, once", async () => {
    const paymentIntent = await paidPaymentIntent();
    const { dispute } = await sandbox.dispute({ paymentIntent });
    const won = await sandbox.closeDispute(dispute.id, "won");
    expect(won.events.map((e) => e.type)).toEqual([
      "charge.dispute.funds_reinstated",
      "charge.dispute.closed",
    ]);
    expect((await stripe.disputes.list({ payment_intent: paymentIntent })).data[0]?.status).toBe("won");
    const moves = await stripe.balanceTransactions.list({ source: dispute.id } as never);
    expect(moves.data.map((t) => [t.amount, t.fee]).sort()).toEqual([
      [-3490, 1500],
      [3490, 0],
    ]);
    await expect(sandbox.closeDispute(dispute.id, "lost")).rejects.toThrow("already closed");

    const other = await sandbox.dispute({ paymentIntent: await paidPaymentIntent() });
    const lost = await sandbox.closeDispute(other.dispute.id, "lost");
    expect(lost.events.map((e) => e.type)).toEqual(["charge.dispute.closed"]);
    expect(lost.dispute.status).toBe("lost");
  });

  it("refuses a limit Stripe would refuse", async () => {
    await expect(stripe.balanceTransactions.list({ limit: 101 })).rejects.toMatchObject({
      param: "limit",
    });
  });
});
