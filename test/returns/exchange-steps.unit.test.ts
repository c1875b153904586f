import { AppError } from "../../src/errors";
import { chargeExchangeWork, refundExchangeChargeWork } from "../../src/inngest/steps/charge-exchange";
import { emailExchangeWork } from "../../src/inngest/steps/email-exchange";
import { releaseExchangeWork, reserveExchangeWork } from "../../src/inngest/steps/reserve-exchange";
import { shipExchangeWork } from "../../src/inngest/steps/ship-exchange";
import { disputedRefundAlertKey } from "../../src/orders/disputed-amount";
import { PaymentRejectedError } from "../../src/payments/payment-gateway";
import type { ReturnRow } from "../../src/returns/return-records";
import { defined } from "../support/defined";
import { address, returnStepsWorld, runId } from "../support/fakes/return-steps";

/**
 * The exchange steps' own work (src/inngest/steps/{charge,reserve,ship,email}-exchange.ts and
 * src/returns/work/exchange-charge.ts) over in-memory records, carrier, mail and card gateway:
 * the fast tier of the `exchanges-fast` mutation group. test/workflow/exchange-charge.test.ts and
 * replayed-return-steps.test.ts stay the end-to-end checks.
 */

const dearer: ReturnRow["lines"] = [
  { sku: "MUG", quantity: 1, unitPrice: 3000, exchangeSku: "MUG-XL", exchangeUnitPrice: 3700 },
];
const cheaper: ReturnRow["lines"] = [
  { sku: "MUG", quantity: 1, unitPrice: 3000, exchangeSku: "MUG-S", exchangeUnitPrice: 2500 },
];

function setup(row: Partial<ReturnRow> = {}) {
  const t = returnStepsWorld({ row: { lines: dearer, ...row } });
  t.db.insert("product", { sku: "MUG-XL", name: "Mug XL" });
  t.db.insert("product", { sku: "ZZZ", name: "Decoy" });
  return t;
}

describe("the exchange's charge (charge-exchange.ts)", () => {
  it("charges a dearer exchange's difference once, off-session on the saved card, and records it", async () => {
    const t = setup();
    await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "charged",
      amount: 700,
      paymentIntentId: "pi_exchange",
    });
    expect(t.payments.charges).toEqual([
      {
        charge: {
          customerId: "cus_1",
          paymentMethodId: "pm_1",
          amount: 700,
          currency: "usd",
          metadata: { orderId: t.order.id, returnId: t.returnId, purpose: "exchange-difference" },
        },
        key: `exchange-charge-${t.returnId}`,
      },
    ]);
    expect(t.records.writes).toEqual(["exchange-charge charged 700"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-charged",
        detail: { returnId: t.returnId, amount: 700, currency: "usd", paymentIntentId: "pi_exchange" },
        key: runId,
      },
    ]);
    // A retry finds it on the row.
    await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "charged",
      amount: 700,
      paymentIntentId: "pi_exchange",
    });
    expect(t.payments.charges).toHaveLength(1);
  });

  it("answers from the row: failed, awaiting payment, unpaid, refunded", async () => {
    for (const [status, outcome] of [
      ["failed", "failed"],
      ["awaiting_payment", "awaiting-payment"],
      ["unpaid", "awaiting-payment"],
    ] as const) {
      const t = setup({ exchange_charge_status: status, exchange_charge_amount: 700 });
      await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({ outcome, amount: 700 });
      const bare = setup({ exchange_charge_status: status });
      await expect(chargeExchangeWork(bare.ctx, bare.returnId, runId)).resolves.toEqual({
        outcome,
        amount: 0,
      });
    }
    const refunded = setup({ exchange_charge_status: "refunded", exchange_charge_intent_id: "pi_x" });
    await expect(chargeExchangeWork(refunded.ctx, refunded.returnId, runId)).resolves.toEqual({
      outcome: "charged",
      amount: 0,
      paymentIntentId: "pi_x",
    });
    expect(refunded.payments.charges).toEqual([]);
  });

  it("a cheaper or even exchange charges nothing; an ended return charges nothing", async () => {
    const t = setup({ lines: cheaper });
    await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "none",
      amount: 0,
    });
    for (const status of ["rejected", "closed", "cancelled"] as const) {
      const ended = setup({ status });
      await expect(chargeExchangeWork(ended.ctx, ended.returnId, runId)).resolves.toEqual({
        outcome: "ended",
        amount: 0,
      });
      expect(ended.payments.charges).toEqual([]);
    }
  });

  it("a refusal is recorded, told to ops and to the customer once, and the run goes no further", async () => {
    const t = setup();
    t.payments.chargeAnswer = new PaymentRejectedError("declined", "insufficient funds", {
      paymentIntentId: "pi_refused",
    });
    await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "failed",
      amount: 700,
    });
    expect(t.records.writes).toEqual(["exchange-charge failed 700"]);
    expect(t.records.row).toMatchObject({
      exchange_charge_intent_id: "pi_refused",
      exchange_charge_error: "card declined: insufficient funds",
    });
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-charge-failed",
        detail: {
          returnId: t.returnId,
          amount: 700,
          reason: "declined",
          message: "card declined: insufficient funds",
          paymentIntentId: "pi_refused",
          lines: [{ name: "Mug XL", quantity: 1 }],
        },
        key: runId,
      },
    ]);
    expect(t.notices).toEqual([
      {
        key: `exchange-charge-failed-${t.returnId}`,
        title: "Exchange not shipped: the difference could not be charged",
        fields: expect.objectContaining({
          orderId: t.order.id,
          returnId: t.returnId,
          amount: 700,
          reason: "card declined: insufficient funds",
          // What ops are to do: settle with the customer, then close the return.
          action: expect.stringContaining("then close the return"),
        }),
      },
    ]);
    expect(t.sent).toEqual([
      expect.objectContaining({
        idempotencyKey: `exchange-charge-failed-${t.returnId}`,
        orderId: t.order.id,
        template: "exchangeChargeFailed",
        to: "buyer@example.com",
      }),
    ]);
  });

  it("no saved card is a refusal like the bank's", async () => {
    for (const card of [
      null,
      { stripe_customer_id: null, payment_method_id: "pm_1", currency: "usd" },
      { stripe_customer_id: "cus_1", payment_method_id: null, currency: "usd" },
    ]) {
      const t = setup();
      t.records.card = card;
      await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
        outcome: "failed",
        amount: 700,
      });
      expect(t.payments.charges).toEqual([]);
      expect(t.records.row.exchange_charge_error).toBe(
        `card declined (no_saved_card): order ${t.order.id} has no saved card`,
      );
    }
  });

  it("the bank wanting the customer present: a Checkout page when one can be made, a refusal otherwise", async () => {
    const t = setup();
    t.ctx.deps.checkouts = { sessions: {} as never, windowMs: 1000 };
    t.payments.chargeAnswer = new PaymentRejectedError("authentication_required", "3DS", {
      paymentIntentId: "pi_3ds",
    });
    await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "awaiting-payment",
      amount: 700,
    });
    expect(t.records.writes).toEqual(["exchange-charge awaiting_payment 700"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-charge-failed",
        detail: {
          returnId: t.returnId,
          amount: 700,
          reason: "authentication_required",
          message: t.payments.chargeAnswer.message,
          checkout: true,
        },
        key: runId,
      },
    ]);
    expect(t.notices).toEqual([]);
    expect(t.sent).toEqual([]);

    // A plain decline is no Checkout page, wired or not: the customer and ops are told.
    const declined = setup();
    declined.ctx.deps.checkouts = { sessions: {} as never, windowMs: 1000 };
    declined.payments.chargeAnswer = new PaymentRejectedError("declined", "insufficient funds");
    await expect(chargeExchangeWork(declined.ctx, declined.returnId, runId)).resolves.toEqual({
      outcome: "failed",
      amount: 700,
    });
    expect(declined.records.writes).toEqual(["exchange-charge failed 700"]);
    expect(declined.notices.map((n) => n.key)).toEqual([`exchange-charge-failed-${declined.returnId}`]);
    expect(declined.sent.map((m) => m.template)).toEqual(["exchangeChargeFailed"]);

    const without = setup();
    without.payments.chargeAnswer = new PaymentRejectedError("authentication_required", "3DS");
    await expect(chargeExchangeWork(without.ctx, without.returnId, runId)).resolves.toEqual({
      outcome: "failed",
      amount: 700,
    });
    expect(without.entries[0]?.detail).toMatchObject({
      reason: "authentication_required",
      paymentIntentId: null,
    });
  });

  it("another failure fails the step for a retry, nothing recorded", async () => {
    const t = setup();
    t.payments.chargeAnswer = new Error("socket hang up");
    await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).rejects.toThrow("socket hang up");
    expect(t.records.writes).toEqual([]);
  });

  it("ended by ops while Stripe answered: the step gives the charge back itself", async () => {
    const t = setup();
    t.records.afterExchange = () => {
      t.records.row.status = "rejected";
    };
    await expect(chargeExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "refunded",
      amount: 700,
      refund: { outcome: "refunded", amount: 700, refundId: "re_exchange" },
    });
    expect(t.payments.refunds).toEqual([
      { paymentIntentId: "pi_exchange", key: `exchange-charge-refund-${t.returnId}` },
    ]);
  });
});

describe("the charge's undo (refundExchangeChargeWork)", () => {
  it("refunds a charge in full once and records it", async () => {
    const t = setup({
      exchange_charge_status: "charged",
      exchange_charge_intent_id: "pi_x",
      exchange_charge_amount: 700,
    });
    await expect(refundExchangeChargeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "refunded",
      amount: 700,
      refundId: "re_exchange",
    });
    expect(t.records.writes).toEqual(["exchange-charge-refund re_exchange"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-charge-refunded",
        detail: { returnId: t.returnId, amount: 700, paymentIntentId: "pi_x", refundId: "re_exchange" },
        key: runId,
      },
    ]);
  });

  it("a refund recorded already (a replay) is not on the timeline twice", async () => {
    const t = setup({ exchange_charge_status: "charged", exchange_charge_intent_id: "pi_x" });
    t.records.recordExchangeChargeRefund = async () => false;
    await expect(refundExchangeChargeWork(t.ctx, t.returnId, runId)).resolves.toMatchObject({
      outcome: "refunded",
    });
    expect(t.entries).toEqual([]);
  });

  it("nothing charged, or no intent, or shipped: nothing refunded", async () => {
    const none = setup();
    await expect(refundExchangeChargeWork(none.ctx, none.returnId, runId)).resolves.toEqual({
      outcome: "not-charged",
    });
    const failed = setup({ exchange_charge_status: "failed", exchange_charge_intent_id: "pi_x" });
    await expect(refundExchangeChargeWork(failed.ctx, failed.returnId, runId)).resolves.toEqual({
      outcome: "not-charged",
    });
    const noIntent = setup({ exchange_charge_status: "charged" });
    await expect(refundExchangeChargeWork(noIntent.ctx, noIntent.returnId, runId)).resolves.toEqual({
      outcome: "not-charged",
    });
    const shipped = setup({
      exchange_charge_status: "charged",
      exchange_charge_intent_id: "pi_x",
      exchange_tracking_number: "EX1",
    });
    await expect(refundExchangeChargeWork(shipped.ctx, shipped.returnId, runId)).resolves.toEqual({
      outcome: "shipped",
    });
    expect([none, failed, noIntent, shipped].flatMap((t) => t.payments.refunds)).toEqual([]);
  });

  it("a charged-back exchange payment is not refunded: the timeline and ops say so once", async () => {
    const t = setup({ exchange_charge_status: "charged", exchange_charge_intent_id: "pi_x" });
    t.payments.refundAnswer = new AppError("charge_disputed", "disputed");
    await expect(refundExchangeChargeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      outcome: "disputed",
    });
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refund-withheld",
        detail: { returnId: t.returnId, paymentIntentId: "pi_x", exchange: true, reason: "charge_disputed" },
        key: runId,
      },
    ]);
    expect(t.notices).toEqual([
      {
        key: disputedRefundAlertKey("pi_x"),
        title: "Refund refused: the payment is disputed",
        fields: expect.objectContaining({
          orderId: t.order.id,
          returnId: t.returnId,
          paymentIntentId: "pi_x",
          // What ops are to do: answer the dispute at Stripe, then close the return.
          action: expect.stringContaining("then close the return"),
        }),
      },
    ]);
    const down = setup({ exchange_charge_status: "charged", exchange_charge_intent_id: "pi_x" });
    down.payments.refundAnswer = new AppError("upstream_unavailable", "down");
    await expect(refundExchangeChargeWork(down.ctx, down.returnId, runId)).rejects.toThrow("down");
  });
});

describe("the exchange's stock, parcel and e-mail", () => {
  it("reserves once and releases once through the records, with the run", async () => {
    const t = setup();
    await expect(reserveExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      movements: [{ sku: "MUG-XL", delta: -1 }],
    });
    await expect(releaseExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      movements: [{ sku: "MUG-XL", delta: 1 }],
    });
    await expect(releaseExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({ movements: [] });
    expect(t.records.writes).toEqual([`reserve ${runId}`, `release ${runId}`]);
  });

  it("ships the new items once, with their weights, recorded and on the timeline", async () => {
    const t = setup();
    t.records.destinationAnswer = { shipping_address: address, weights: { "MUG-XL": 20 } };
    await expect(shipExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      trackingNumber: "EX1",
      created: true,
    });
    const lines = [{ sku: "MUG-XL", quantity: 1, weightOz: 20 }];
    expect(t.labels.shipped).toEqual([{ returnId: t.returnId, address, lines }]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-shipped",
        detail: { returnId: t.returnId, trackingNumber: "EX1", carrier: "UPS", lines },
        key: runId,
      },
    ]);
    await expect(shipExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      trackingNumber: "EX1",
      created: false,
    });
    expect(t.labels.shipped).toHaveLength(1);
  });

  it("only the lines asking for another item ship; unknown weights are left to the carrier", async () => {
    const t = setup({
      lines: [
        ...dearer,
        { sku: "CUP", quantity: 2, unitPrice: 100, exchangeSku: null, exchangeUnitPrice: null },
      ],
    });
    t.records.destinationAnswer = { shipping_address: address, weights: null };
    await shipExchangeWork(t.ctx, t.returnId, runId);
    expect(t.labels.shipped).toEqual([
      { returnId: t.returnId, address, lines: [{ sku: "MUG-XL", quantity: 1, weightOz: null }] },
    ]);
    const lost = setup();
    lost.records.destinationAnswer = null;
    await expect(shipExchangeWork(lost.ctx, lost.returnId, runId)).rejects.toThrow(
      `Order ${lost.order.id} has no address to send the exchange to`,
    );
  });

  it("ended while its label was bought: the label goes back, ops told if the carrier keeps it", async () => {
    const t = setup();
    t.labels.handBackAnswer = "rejected";
    t.records.afterExchange = () => {
      t.records.row.status = "closed";
    };
    await expect(shipExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({
      trackingNumber: "EX1",
      created: true,
      handedBack: "rejected",
    });
    expect(t.labels.handedBack).toEqual([[t.returnId, "exchange"]]);
    expect(t.records.writes).toEqual(["exchange-label EX1"]);
    expect(t.entries[1]).toEqual({
      orderId: t.order.id,
      kind: "return-label-refund-requested",
      detail: {
        returnId: t.returnId,
        status: "rejected",
        label: "exchange",
        trackingNumber: "EX1",
        why: "the return was closed as it was bought",
      },
      key: `${runId}/exchange`,
    });
    expect(t.notices.map((n) => [n.key, n.title])).toEqual([
      [
        `unwanted-exchange-label-${t.returnId}`,
        "An exchange label bought for an ended return was not taken back",
      ],
    ]);
  });

  it("e-mails the tracking once and records what it said", async () => {
    const t = setup({ exchange_tracking_number: "EX1", exchange_tracking_url: "https://track/EX1" });
    await expect(emailExchangeWork(t.ctx, t.returnId, runId)).resolves.toEqual({ status: "sent" });
    expect(t.sent).toEqual([
      expect.objectContaining({
        idempotencyKey: `exchange-shipped-${t.returnId}`,
        orderId: t.order.id,
        template: "exchangeShipped",
        to: "buyer@example.com",
      }),
    ]);
    expect(t.records.writes).toEqual(["exchange-sent"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "exchange-sent",
        detail: {
          returnId: t.returnId,
          lines: [{ name: "Mug XL", quantity: 1 }],
          trackingNumber: "EX1",
          trackingUrl: "https://track/EX1",
          email: "sent",
        },
        key: runId,
      },
    ]);
  });

  it("the carrier's link when the label has none; an unknown product by its sku; nothing for an ended return", async () => {
    const t = setup({
      exchange_tracking_number: "EX1",
      lines: [{ ...defined(cheaper[0]), exchangeSku: "NEW" }],
    });
    await emailExchangeWork(t.ctx, t.returnId, runId);
    expect(t.entries[0]?.detail).toMatchObject({
      trackingUrl: "https://carrier/EX1",
      lines: [{ name: "NEW", quantity: 1 }],
    });
    const ended = setup({ exchange_tracking_number: "EX1", status: "cancelled" });
    await expect(emailExchangeWork(ended.ctx, ended.returnId, runId)).resolves.toEqual({ status: "skipped" });
    expect(ended.sent).toEqual([]);
    const unshipped = setup();
    await expect(emailExchangeWork(unshipped.ctx, unshipped.returnId, runId)).rejects.toThrow(
      `Exchange of return ${unshipped.returnId} has not shipped yet`,
    );
  });
});
