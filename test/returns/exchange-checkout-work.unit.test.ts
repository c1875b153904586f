import { AppError } from "../../src/errors";
import { disputedRefundAlertKey } from "../../src/orders/disputed-amount";
import { createExchangeCheckouts, type ExchangeCheckoutView } from "../../src/payments/exchange-checkout";
import type { ReturnRow } from "../../src/returns/return-records";
import { createExchangeCheckoutWork, settleCheckout } from "../../src/returns/work/exchange-checkout";
import { withCheckoutRecords } from "../support/fakes/checkout-records";
import { CheckoutStripe } from "../support/fakes/checkout-stripe";
import { returnStepsWorld, runId } from "../support/fakes/return-steps";

/**
 * The difference paid on a Checkout page (src/returns/work/exchange-checkout.ts): the page made
 * once, e-mailed once, its payment settled as the exchange's charge once (or refunded once when it
 * came too late), its expiry, and the exchange closed unpaid. Over the return steps' in-memory
 * records, mail and card gateway and the real Checkout adapter on an in-memory Stripe: the fast
 * tier of the `exchanges-fast` mutation group. test/returns/late-exchange-payment.test.ts and
 * test/workflow/exchange-charge.test.ts stay the end-to-end checks.
 */

const dearer: ReturnRow["lines"] = [
  { sku: "MUG", quantity: 1, unitPrice: 3000, exchangeSku: "MUG-XL", exchangeUnitPrice: 3700 },
];
const minute = 60_000;
const hour = 60 * minute;

function setup(row: Partial<ReturnRow> = {}, options: { windowMs?: number; wired?: boolean } = {}) {
  const t = returnStepsWorld({ row: { lines: dearer, ...row } });
  t.db.insert("product", { sku: "MUG-XL", name: "Mug XL" });
  const records = withCheckoutRecords(t.records);
  const stripe = new CheckoutStripe();
  if (options.wired !== false)
    t.ctx.deps.checkouts = {
      sessions: createExchangeCheckouts(stripe.asStripe()),
      windowMs: options.windowMs ?? 2 * hour,
    };
  const work = createExchangeCheckoutWork(t.ctx);
  return { ...t, records, stripe, work };
}

/** A return awaiting the difference on its page, the page made at Stripe. */
async function awaiting(row: Partial<ReturnRow> = {}) {
  const t = setup({ exchange_charge_status: "awaiting_payment", exchange_charge_amount: 700, ...row });
  const { checkoutSessionId } = await t.work.createExchangeCheckout(t.returnId);
  t.records.writes.length = 0;
  return { ...t, sessionId: checkoutSessionId };
}

describe("the Checkout page for the difference (createExchangeCheckout)", () => {
  afterEach(() => jest.restoreAllMocks());

  it("makes one page for the awaited amount, on the customer's card account, and keeps it on the return", async () => {
    const now = Date.UTC(2026, 11, 7, 5, 0, 0);
    jest.spyOn(Date, "now").mockReturnValue(now);
    const t = setup({ exchange_charge_amount: 650 });
    await expect(t.work.createExchangeCheckout(t.returnId)).resolves.toEqual({
      checkoutSessionId: "cs_test_1",
      url: "https://checkout.stripe.test/pay/cs_test_1",
      expiresAt: new Date(now + 2 * hour).toISOString(),
    });
    const orderUrl = `https://shop/orders/${t.order.id}`;
    expect(t.stripe.created).toEqual([
      {
        params: expect.objectContaining({
          customer: "cus_1",
          line_items: [
            {
              price_data: {
                currency: "usd",
                unit_amount: 650,
                product_data: { name: "Exchange: the difference" },
              },
              quantity: 1,
            },
          ],
          metadata: { orderId: t.order.id, returnId: t.returnId, purpose: "exchange-difference" },
          success_url: orderUrl,
          cancel_url: orderUrl,
          expires_at: (now + 2 * hour) / 1000,
        }),
        idempotencyKey: `exchange-checkout-${t.returnId}`,
      },
    ]);
    expect(t.records.writes).toEqual(["exchange-checkout cs_test_1"]);
  });

  it("a retried step finds the page on the return: no second page at Stripe", async () => {
    const t = setup();
    const first = await t.work.createExchangeCheckout(t.returnId);
    await expect(t.work.createExchangeCheckout(t.returnId)).resolves.toEqual({
      checkoutSessionId: first.checkoutSessionId,
      url: first.url,
      expiresAt: null,
    });
    expect(t.stripe.created).toHaveLength(1);
  });

  it("the page lives within Stripe's 30 minutes to 24 hours, whatever the payment window", async () => {
    const now = Date.UTC(2026, 11, 7, 5, 0, 0);
    jest.spyOn(Date, "now").mockReturnValue(now);
    for (const [windowMs, lifetime] of [
      [minute, 31 * minute],
      [31 * minute, 31 * minute],
      [3 * hour, 3 * hour],
      [23 * hour, 23 * hour],
      [72 * hour, 23 * hour],
    ] as const) {
      const t = setup({}, { windowMs });
      const made = await t.work.createExchangeCheckout(t.returnId);
      expect(made.expiresAt).toBe(new Date(now + lifetime).toISOString());
      expect(t.stripe.created[0]?.params.expires_at).toBe((now + lifetime) / 1000);
    }
  });

  it("without a saved card: the difference from the lines, in dollars, on no customer account", async () => {
    const t = setup();
    t.records.card = null;
    await t.work.createExchangeCheckout(t.returnId);
    const params = t.stripe.created[0]?.params;
    expect(params).not.toHaveProperty("customer");
    expect(params?.line_items?.[0]?.price_data).toMatchObject({ currency: "usd", unit_amount: 700 });
    const eur = setup();
    eur.records.card = { stripe_customer_id: null, payment_method_id: null, currency: " EUR " };
    await eur.work.createExchangeCheckout(eur.returnId);
    expect(eur.stripe.created[0]?.params.line_items?.[0]?.price_data?.currency).toBe("eur");
    expect(eur.stripe.created[0]?.params).not.toHaveProperty("customer");
  });

  it("not wired: the step fails and nothing is asked of Stripe", async () => {
    const t = setup({}, { wired: false });
    await expect(t.work.createExchangeCheckout(t.returnId)).rejects.toThrow(
      "exchange checkouts are not wired",
    );
    await expect(t.work.readExchangeCheckout("cs_x")).rejects.toThrow("exchange checkouts are not wired");
    await expect(t.work.expireExchangeCheckout(t.returnId, runId)).rejects.toThrow(
      "exchange checkouts are not wired",
    );
    expect(t.records.writes).toEqual([]);
  });
});

describe("the page's URL e-mailed (emailExchangeCheckout)", () => {
  it("once per return, with the amount, the items and the date to pay by, and on the timeline", async () => {
    const t = setup({ exchange_charge_amount: 650 });
    await expect(
      t.work.emailExchangeCheckout(t.returnId, runId, "https://pay/cs_1", "Dec 8, 2026"),
    ).resolves.toEqual({ status: "sent" });
    expect(t.sent).toEqual([
      expect.objectContaining({
        idempotencyKey: `exchange-checkout-${t.returnId}`,
        orderId: t.order.id,
        template: "exchangePaymentNeeded",
        to: "buyer@example.com",
      }),
    ]);
    expect(t.sent[0]?.content.text).toContain("Pay the difference: https://pay/cs_1");
    expect(t.sent[0]?.content.text).toContain("by Dec 8, 2026");
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-checkout-sent",
        detail: {
          returnId: t.returnId,
          lines: [{ name: "Mug XL", quantity: 1 }],
          amount: 650,
          payUrl: "https://pay/cs_1",
          payBy: "Dec 8, 2026",
          email: "sent",
        },
        key: runId,
      },
    ]);
  });

  it("no date known: the page's own; no amount recorded: the lines' difference", async () => {
    const t = setup();
    await t.work.emailExchangeCheckout(t.returnId, runId, "https://pay/cs_1", null);
    expect(t.entries[0]?.detail).toMatchObject({ amount: 700, payBy: "the date on the page" });
  });
});

describe("a paid page settled on its return (settleCheckout)", () => {
  it("awaited: the payment becomes the exchange's charge, once, on the timeline", async () => {
    const t = await awaiting();
    t.stripe.pay(t.sessionId);
    const view = await t.work.readExchangeCheckout(t.sessionId);
    await expect(t.work.settleExchangeCheckout(view, null)).resolves.toEqual({
      outcome: "charged",
      first: true,
      returnId: t.returnId,
      orderId: t.order.id,
    });
    expect(t.records.writes).toEqual([`exchange-checkout-paid pi_${t.sessionId} 700`]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-charged",
        detail: {
          returnId: t.returnId,
          paymentIntentId: `pi_${t.sessionId}`,
          amount: 700,
          currency: "usd",
          checkoutSessionId: t.sessionId,
        },
        key: undefined,
      },
    ]);
    // Stripe delivers it again: the charge it became, nothing written or refunded.
    await expect(t.work.settleExchangeCheckout(view, null)).resolves.toEqual({
      outcome: "charged",
      first: false,
      returnId: t.returnId,
      orderId: t.order.id,
    });
    expect(t.records.writes).toHaveLength(1);
    expect(t.entries).toHaveLength(1);
    expect(t.payments.refunds).toEqual([]);
  });

  it("settled by the run's expiry: the timeline entry carries the run", async () => {
    const t = await awaiting();
    t.stripe.pay(t.sessionId);
    const view = await t.work.readExchangeCheckout(t.sessionId);
    await expect(settleCheckout(t.ctx, view, runId)).resolves.toMatchObject({ outcome: "charged" });
    expect(t.entries.map((e) => [e.kind, e.key])).toEqual([["exchange-charged", runId]]);
  });

  it("not paid yet, or no payment: nothing written", async () => {
    const t = await awaiting();
    const open = await t.work.readExchangeCheckout(t.sessionId);
    await expect(t.work.settleExchangeCheckout(open, null)).resolves.toEqual({ outcome: "not-paid" });
    const noIntent: ExchangeCheckoutView = { ...open, paid: true, paymentIntentId: null };
    await expect(t.work.settleExchangeCheckout(noIntent, null)).resolves.toEqual({ outcome: "not-paid" });
    expect(t.records.writes).toEqual([]);
  });

  it("not this return's page, or no return, or a return we do not have: not ours, nothing written", async () => {
    const t = await awaiting();
    t.stripe.pay(t.sessionId);
    const view = await t.work.readExchangeCheckout(t.sessionId);
    for (const other of [
      { ...view, returnId: null },
      { ...view, returnId: "00000000-0000-4000-8000-000000000999" },
      { ...view, id: "cs_someone_else" },
    ])
      await expect(t.work.settleExchangeCheckout(other, null)).resolves.toEqual({ outcome: "not-ours" });
    expect(t.records.writes).toEqual([]);
    expect(t.payments.refunds).toEqual([]);
  });

  it("paid after the exchange was closed unpaid: refunded in full once, ops told once", async () => {
    const t = await awaiting();
    t.records.row.exchange_charge_status = "unpaid";
    t.stripe.pay(t.sessionId);
    const view = await t.work.readExchangeCheckout(t.sessionId);
    await expect(t.work.settleExchangeCheckout(view, null)).resolves.toEqual({ outcome: "refunded" });
    expect(t.payments.refunds).toEqual([
      { paymentIntentId: `pi_${t.sessionId}`, key: `exchange-checkout-refund-${t.returnId}` },
    ]);
    expect(t.records.writes).toEqual(["exchange-late-refund re_exchange 700"]);
    expect(t.records.row).toMatchObject({
      exchange_charge_status: "refunded",
      exchange_charge_intent_id: `pi_${t.sessionId}`,
    });
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-charge-refunded",
        detail: {
          returnId: t.returnId,
          paymentIntentId: `pi_${t.sessionId}`,
          amount: 700,
          refundId: "re_exchange",
          late: true,
        },
        key: undefined,
      },
    ]);
    expect(t.notices).toEqual([
      {
        key: `exchange-late-payment-${t.returnId}`,
        title: "Exchange paid after it was closed: the payment was refunded",
        fields: { orderId: t.order.id, returnId: t.returnId, amount: 700, refundId: "re_exchange" },
      },
    ]);
    // Stripe delivers it again: the refund it got, nothing more.
    await expect(t.work.settleExchangeCheckout(view, null)).resolves.toEqual({ outcome: "refunded" });
    expect(t.payments.refunds).toHaveLength(1);
    expect(t.notices).toHaveLength(1);
  });

  it("paid after ops ended the return while it was awaited: refunded, not charged", async () => {
    const t = await awaiting({ status: "closed" });
    t.stripe.pay(t.sessionId);
    const view = await t.work.readExchangeCheckout(t.sessionId);
    await expect(settleCheckout(t.ctx, view, runId)).resolves.toMatchObject({ outcome: "refunded" });
    expect(t.records.row.exchange_charge_status).toBe("refunded");
    expect(t.entries.map((e) => [e.kind, e.key])).toEqual([["exchange-charge-refunded", runId]]);
  });

  it("a refund recorded already by another delivery: not on the timeline or told twice", async () => {
    const t = await awaiting({ exchange_charge_status: "unpaid" });
    t.stripe.pay(t.sessionId);
    const view = await t.work.readExchangeCheckout(t.sessionId);
    t.records.recordLateExchangePaymentRefund = async () => false;
    await expect(t.work.settleExchangeCheckout(view, null)).resolves.toEqual({ outcome: "refunded" });
    expect(t.payments.refunds).toHaveLength(1);
    expect(t.entries).toEqual([]);
    expect(t.notices).toEqual([]);
  });

  it("charged already by another payment: this one is not ours to settle", async () => {
    for (const status of ["charged", "refunded", "failed"] as const) {
      const t = await awaiting({
        exchange_charge_status: status,
        exchange_charge_intent_id: "pi_offsession",
      });
      t.stripe.pay(t.sessionId);
      const view = await t.work.readExchangeCheckout(t.sessionId);
      await expect(t.work.settleExchangeCheckout(view, null)).resolves.toEqual({ outcome: "not-ours" });
      expect(t.payments.refunds).toEqual([]);
      expect(t.records.writes).toEqual([]);
    }
  });

  it("the late payment charged back: not refunded, the timeline and ops say so once", async () => {
    const t = await awaiting({ exchange_charge_status: "unpaid" });
    t.stripe.pay(t.sessionId);
    const view = await t.work.readExchangeCheckout(t.sessionId);
    t.payments.refundAnswer = new AppError("charge_disputed", "disputed");
    await expect(settleCheckout(t.ctx, view, runId)).resolves.toEqual({ outcome: "not-ours" });
    expect(t.records.writes).toEqual([]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refund-withheld",
        detail: {
          returnId: t.returnId,
          paymentIntentId: `pi_${t.sessionId}`,
          exchange: true,
          reason: "charge_disputed",
        },
        key: runId,
      },
    ]);
    expect(t.notices.map((n) => n.key)).toEqual([disputedRefundAlertKey(`pi_${t.sessionId}`)]);
    // Stripe down: the delivery fails for Stripe to send it again.
    t.payments.refundAnswer = new AppError("upstream_unavailable", "Stripe is down");
    await expect(settleCheckout(t.ctx, view, null)).rejects.toThrow("Stripe is down");
  });
});

describe("the payment window over (expireExchangeCheckout) and the exchange closed unpaid", () => {
  it("expired unpaid at Stripe: the charge is unpaid", async () => {
    const t = await awaiting();
    await expect(t.work.expireExchangeCheckout(t.returnId, runId)).resolves.toEqual({ outcome: "unpaid" });
    expect(t.stripe.expired).toEqual([t.sessionId]);
    expect(t.records.writes).toEqual(["exchange-unpaid"]);
    await expect(t.work.exchangePaymentState(t.returnId)).resolves.toEqual({
      charge: "unpaid",
      status: "approved",
    });
  });

  it("paid in the last instant: the expiry's answer settles it as the charge, and the exchange ships", async () => {
    const t = await awaiting();
    t.stripe.beforeExpire = (id) => void t.stripe.pay(id);
    await expect(t.work.expireExchangeCheckout(t.returnId, runId)).resolves.toEqual({ outcome: "paid" });
    expect(t.records.writes).toEqual([`exchange-checkout-paid pi_${t.sessionId} 700`]);
    expect(t.entries.map((e) => [e.kind, e.key])).toEqual([["exchange-charged", runId]]);
  });

  it("paid in the last instant on a return ops ended: refunded, the charge not kept", async () => {
    const t = await awaiting({ status: "rejected" });
    t.stripe.beforeExpire = (id) => void t.stripe.pay(id);
    await expect(t.work.expireExchangeCheckout(t.returnId, runId)).resolves.toEqual({ outcome: "unpaid" });
    expect(t.payments.refunds).toHaveLength(1);
    expect(t.records.row.exchange_charge_status).toBe("refunded");
  });

  it("charged already (the webhook came first): nothing expired", async () => {
    const t = await awaiting();
    t.records.row.exchange_charge_status = "charged";
    await expect(t.work.expireExchangeCheckout(t.returnId, runId)).resolves.toEqual({ outcome: "paid" });
    expect(t.stripe.expired).toEqual([]);
    expect(t.records.writes).toEqual([]);
  });

  it("no page was ever made: unpaid, nothing asked of Stripe", async () => {
    const t = setup({ exchange_charge_status: "awaiting_payment" });
    await expect(t.work.expireExchangeCheckout(t.returnId, runId)).resolves.toEqual({ outcome: "unpaid" });
    expect(t.stripe.expired).toEqual([]);
    expect(t.records.writes).toEqual(["exchange-unpaid"]);
  });

  it("closed unpaid: the timeline says so, ops are told, a received return is closed", async () => {
    const t = setup({
      status: "received",
      exchange_charge_status: "unpaid",
      exchange_charge_amount: 700,
      exchange_released_at: new Date(),
    });
    await expect(t.work.closeUnpaidExchange(t.returnId, runId)).resolves.toEqual({ status: "closed" });
    expect(t.records.writes).toEqual(["closed (exchange not paid in time)"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-unpaid",
        detail: { returnId: t.returnId, amount: 700, released: true },
        key: runId,
      },
      {
        orderId: t.order.id,
        kind: "return-closed",
        detail: { returnId: t.returnId, by: "process-return" },
        key: runId,
      },
    ]);
    expect(t.notices).toEqual([
      {
        key: `exchange-unpaid-${t.returnId}`,
        title: "Exchange closed: the difference was not paid in time",
        fields: {
          orderId: t.order.id,
          returnId: t.returnId,
          amount: 700,
          action: "The new items went back to stock; settle the returned goods with the customer",
        },
      },
    ]);
  });

  it("closed unpaid before the goods came back: the return stays open for them; no amount is 0 to ops", async () => {
    const t = setup({ status: "approved", exchange_charge_status: "unpaid" });
    await expect(t.work.closeUnpaidExchange(t.returnId, runId)).resolves.toEqual({ status: "approved" });
    expect(t.records.writes).toEqual([]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-unpaid",
        detail: { returnId: t.returnId, amount: null, released: false },
        key: runId,
      },
    ]);
    expect(t.notices[0]?.fields).toMatchObject({ amount: 0 });
  });
});
