import { refundedAtStripeAlertKey } from "../../src/inngest/steps/refund-return";
import type { ReturnRow } from "../../src/returns/return-records";
import { restRefundIdOf } from "../../src/returns/return-work";
import { address, returnStepsWorld as setup, runId } from "../support/fakes/return-steps";

/**
 * The return steps' own work (src/inngest/steps/{return-label,email-return-label,refund-return,
 * restock-return,write-off-return,close-return}.ts and src/returns/work/*) over in-memory records,
 * carrier and mail, with the real refund use case on the in-memory database and Stripe
 * (test/support/fakes/money-*.ts): the fast tier of the `returns-fast` mutation group.
 * test/workflow/returns.test.ts and replayed-return-steps.test.ts stay the end-to-end checks.
 */

describe("the return's refund (refund-return.ts)", () => {
  it("refunds the lines less the fee once, under the return's id, and records it", async () => {
    const t = setup();
    const result = await t.work.refund(t.returnId, runId);
    expect(result).toEqual({ amount: 2700, fee: 300, refundId: t.returnId });
    expect(t.stripe.asked).toEqual([
      expect.objectContaining({
        params: expect.objectContaining({
          amount: 2700,
          metadata: expect.objectContaining({ reason: `return ${t.returnId}` }),
        }),
        idempotencyKey: `refund-${t.returnId}`,
      }),
    ]);
    expect(t.records.writes).toEqual(["refund 2700 fee 300"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refunded",
        detail: { returnId: t.returnId, amount: 2700, fee: 300, stripeRefund: "re_1" },
        key: runId,
      },
    ]);
    expect(t.db.timeline(t.order.id, "refund-requested")[0]?.detail).toMatchObject({ by: "process-return" });

    // Replayed after its write committed: the refund made is the answer, no second one.
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual(result);
    expect(t.stripe.asked).toHaveLength(1);
  });

  it("a return that refunds all that was left of the order leaves the order's shipping label alone", async () => {
    const t = setup({ fee: { kind: "amount", amount: 0 }, captured: 3000 });
    await expect(t.work.refund(t.returnId, runId)).resolves.toMatchObject({ amount: 3000 });
    expect(t.payment()).toMatchObject({ amountRefunded: 3000 });
    // The parcel was delivered and came back on the return label: its outbound label is used.
    expect(t.labelVoids).toEqual([]);
  });

  it("a return worth nothing after the fee refunds nothing and asks Stripe nothing", async () => {
    const t = setup({ fee: { kind: "amount", amount: 5000 } });
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 3000,
      refundId: null,
    });
    expect(t.records.writes).toEqual(["refund 0 fee 3000"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refunded",
        detail: { returnId: t.returnId, amount: 0, fee: 3000 },
        key: runId,
      },
    ]);
    expect(t.stripe.asked).toEqual([]);
  });

  it("a chargeback withholds the refund: nothing leaves, the return settles on it", async () => {
    const t = setup();
    t.db.insert("dispute", {
      orderId: t.order.id,
      providerId: "dp_1",
      status: "lost",
      amount: 5000,
      currency: "usd",
      reason: "fraudulent",
      eventCreatedAt: new Date(),
    });
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 300,
      refundId: null,
      withheld: true,
    });
    expect(t.records.writes).toEqual(["refund 0 fee 300"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refund-withheld",
        detail: { returnId: t.returnId, due: 2700, fee: 300, disputes: ["dp_1"] },
        key: runId,
      },
    ]);
    expect(t.stripe.asked).toEqual([]);
  });

  it("a chargeback Stripe knows before us withholds it too, naming no dispute", async () => {
    const t = setup();
    t.intent.disputed = true;
    await expect(t.work.refund(t.returnId, runId)).resolves.toMatchObject({
      amount: 0,
      withheld: true,
    });
    expect(t.entries[0]?.detail).toMatchObject({ disputes: [] });
  });

  it("refunded in full at the Dashboard (its webhook not here): settled on Stripe's answer, ops told once", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 5000);
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 300,
      refundId: null,
    });
    expect(t.records.writes).toEqual(["refund 0 fee 300"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refunded-at-stripe",
        detail: {
          returnId: t.returnId,
          due: 2700,
          fee: 300,
          refundedAtStripe: 5000,
          captured: 5000,
          stripeCode: "charge_already_refunded",
        },
        key: runId,
      },
    ]);
    expect(t.notices).toEqual([
      {
        key: refundedAtStripeAlertKey(t.returnId),
        title: "Return not refunded: the payment was already refunded at Stripe",
        fields: expect.objectContaining({
          orderId: t.order.id,
          returnId: t.returnId,
          due: 2700,
          refundedAtStripe: 5000,
          captured: 5000,
          action: expect.stringMatching(/\w/),
        }),
      },
    ]);
    expect(t.payment()).toMatchObject({ amountRefunded: 5000, status: "refunded" });
    // Said once per return: the alert is keyed by the return it is about.
    expect(t.notices[0]?.key).toContain(t.returnId);
  });

  it("refunded in part at the Dashboard (its webhook not here): what is left is refunded, the shortfall told once", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 4000);
    const result = await t.work.refund(t.returnId, runId);
    const rest = restRefundIdOf(t.returnId);
    expect(rest).not.toBe(t.returnId);
    expect(result).toEqual({ amount: 1000, fee: 300, refundId: rest });
    // The return's own key was refused at Stripe, so what is left goes under a key of its own.
    expect(t.stripe.asked.map((a) => [a.params.amount, a.idempotencyKey])).toEqual([
      [2700, `refund-${t.returnId}`],
      [1000, `refund-${rest}`],
    ]);
    expect(t.records.writes).toEqual(["refund 1000 fee 300"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refunded-at-stripe",
        detail: {
          returnId: t.returnId,
          due: 2700,
          fee: 300,
          refundedAtStripe: 4000,
          captured: 5000,
          stripeCode: "amount_too_large",
          refunded: 1000,
          shortfall: 1700,
        },
        key: runId,
      },
      {
        orderId: t.order.id,
        kind: "return-refunded",
        detail: { returnId: t.returnId, amount: 1000, fee: 300, stripeRefund: "re_2", due: 2700 },
        key: runId,
      },
    ]);
    expect(t.notices).toEqual([
      {
        key: refundedAtStripeAlertKey(t.returnId),
        title: "Return refunded in part: the payment was already refunded in part at Stripe",
        fields: expect.objectContaining({
          orderId: t.order.id,
          returnId: t.returnId,
          due: 2700,
          refunded: 1000,
          shortfall: 1700,
          refundedAtStripe: 4000,
          captured: 5000,
          action: expect.stringMatching(/\w/),
        }),
      },
    ]);
    expect(t.payment()).toMatchObject({ amountRefunded: 5000, status: "refunded" });

    // Replayed after its writes committed (the memo lost): the same refund answers, nothing more leaves.
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual(result);
    expect(t.stripe.asked).toHaveLength(2);
    expect(t.records.writes).toEqual(["refund 1000 fee 300", "refund 1000 fee 300"]);
    expect(t.notices.map((n) => n.key)).toEqual([
      refundedAtStripeAlertKey(t.returnId),
      refundedAtStripeAlertKey(t.returnId),
    ]);
    expect(t.intent.refunds.map((r) => r.amount)).toEqual([4000, 1000]);
  });

  it("what is left refused in its turn settles the return on Stripe's answer", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 4000);
    t.stripe.onRefund = undefined;
    const create = t.stripe.client.refunds.create;
    let asks = 0;
    t.stripe.client.refunds.create = async (params, options) => {
      asks += 1;
      // Another Dashboard refund of the rest lands between the two asks.
      if (asks === 2) t.stripe.dashboardRefund(t.intent.id, 1000);
      return create(params, options);
    };
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 300,
      refundId: null,
    });
    expect(t.records.writes).toEqual(["refund 0 fee 300"]);
    expect(t.kinds()).toEqual(["return-refunded-at-stripe"]);
  });

  it("a chargeback recorded before what is left is asked: it is withheld, naming the dispute; nothing more leaves", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 4000);
    t.stripe.onRefund = undefined;
    const create = t.stripe.client.refunds.create;
    let asks = 0;
    t.stripe.client.refunds.create = async (params, options) => {
      asks += 1;
      // The dispute's webhook lands while Stripe answers the return's own refund.
      t.db.insert("dispute", {
        orderId: t.order.id,
        providerId: "dp_1",
        status: "needs_response",
        amount: 5000,
        currency: "usd",
        reason: "fraudulent",
        eventCreatedAt: new Date(),
      });
      return create(params, options);
    };
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 300,
      refundId: null,
      withheld: true,
    });
    expect(asks).toBe(1);
    expect(t.intent.refunds.map((r) => r.amount)).toEqual([4000]);
    expect(t.records.writes).toEqual(["refund 0 fee 300"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refund-withheld",
        detail: { returnId: t.returnId, due: 2700, fee: 300, disputes: ["dp_1"] },
        key: runId,
      },
    ]);
  });

  it("Stripe unavailable when what is left is asked: the step fails for a retry, nothing recorded", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 4000);
    t.stripe.onRefund = undefined;
    const create = t.stripe.client.refunds.create;
    let asks = 0;
    t.stripe.client.refunds.create = async (params, options) => {
      asks += 1;
      if (asks === 2) t.stripe.failCreates.push({ message: "socket hang up" });
      return create(params, options);
    };
    await expect(t.work.refund(t.returnId, runId)).rejects.toMatchObject({ code: "upstream_unavailable" });
    expect(t.records.writes).toEqual([]);
    expect(t.entries).toEqual([]);
  });

  it("Stripe's total unknown when it refuses: nothing more is asked", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 4000);
    t.stripe.failRetrieves = 1;
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 300,
      refundId: null,
    });
    expect(t.stripe.asked).toHaveLength(1);
  });

  it("Stripe unreadable when it refuses: the records' total is said", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 5000);
    t.stripe.failRetrieves = 1;
    await t.work.refund(t.returnId, runId);
    expect(t.entries[0]?.detail).toMatchObject({ refundedAtStripe: 0, captured: 5000 });
    expect(t.notices[0]?.fields).toMatchObject({ refundedAtStripe: 0, captured: 5000 });
  });

  it("part refunded by other means (recorded): what is left is refunded, ops told once", async () => {
    const t = setup({ captured: 5000 });
    t.payment().amountRefunded = 4000;
    t.stripe.dashboardRefund(t.intent.id, 4000);
    const result = await t.work.refund(t.returnId, runId);
    expect(result).toEqual({ amount: 1000, fee: 300, refundId: t.returnId });
    expect(t.records.writes).toEqual(["refund 1000 fee 300"]);
    expect(t.entries[0]).toMatchObject({
      kind: "return-refunded",
      detail: { amount: 1000, fee: 300, stripeRefund: "re_2" },
    });
    expect(t.notices).toEqual([
      {
        key: `return-refund-short-${t.returnId}`,
        title: "Return refund exceeds what is left to refund",
        fields: expect.objectContaining({
          orderId: t.order.id,
          returnId: t.returnId,
          due: 2700,
          refundable: 1000,
          action: expect.stringMatching(/\w/),
        }),
      },
    ]);
  });

  it("all refunded by other means (recorded): nothing more, the return settles with what was due", async () => {
    const t = setup();
    t.payment().amountRefunded = 5000;
    await expect(t.work.refund(t.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 300,
      refundId: null,
    });
    expect(t.records.writes).toEqual(["refund 0 fee 300"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-refunded",
        detail: { returnId: t.returnId, amount: 0, fee: 300, due: 2700 },
        key: runId,
      },
    ]);
    expect(t.notices.map((n) => n.fields.refundable)).toEqual([0]);
  });

  it("what is left refused in its turn: by a dispute, by Stripe, or failing otherwise", async () => {
    const disputed = setup();
    disputed.payment().amountRefunded = 4000;
    disputed.intent.disputed = true;
    await expect(disputed.work.refund(disputed.returnId, runId)).resolves.toMatchObject({
      withheld: true,
    });

    const back = setup();
    back.payment().amountRefunded = 4000;
    back.stripe.dashboardRefund(back.intent.id, 5000);
    await expect(back.work.refund(back.returnId, runId)).resolves.toEqual({
      amount: 0,
      fee: 300,
      refundId: null,
    });
    expect(back.kinds()).toEqual(["return-refunded-at-stripe"]);

    const down = setup();
    down.payment().amountRefunded = 4000;
    down.stripe.failCreates.push({ message: "socket hang up" });
    await expect(down.work.refund(down.returnId, runId)).rejects.toMatchObject({
      code: "upstream_unavailable",
    });
    expect(down.records.writes).toEqual([]);
  });

  it("an order with nothing captured: the use case's refusal fails the step as it is, nothing recorded", async () => {
    const t = setup();
    t.payment().amountCaptured = 0;
    // refund-order refuses without details (no Stripe answer to read): the step does not treat
    // it as Stripe's "already refunded" and fails with the refusal itself.
    const refusal: unknown = await t.work.refund(t.returnId, runId).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: "order_not_refundable" });
    expect((refusal as Error).message).toBe(
      `Order ${t.order.id} cannot be refunded: nothing was captured: an authorisation is released by a cancel`,
    );
    expect(t.stripe.asked).toEqual([]);
    expect(t.records.writes).toEqual([]);
    expect(t.entries).toEqual([]);
    expect(t.notices).toEqual([]);
  });

  it("Stripe unavailable: the step fails for a retry, nothing recorded", async () => {
    const t = setup();
    t.stripe.failCreates.push({ message: "socket hang up" });
    await expect(t.work.refund(t.returnId, runId)).rejects.toMatchObject({
      code: "upstream_unavailable",
    });
    expect(t.records.writes).toEqual([]);
    expect(t.entries).toEqual([]);
  });
});

describe("the return label (return-label.ts, work/labels.ts)", () => {
  it("bought once from the order's address with the lines' weights, recorded and on the timeline", async () => {
    const t = setup();
    await expect(t.work.buyLabel(t.returnId, runId)).resolves.toEqual({
      trackingNumber: "RT1",
      created: true,
    });
    expect(t.labels.bought).toEqual([
      {
        returnId: t.returnId,
        address,
        lines: [
          {
            sku: "MUG",
            quantity: 1,
            unitPrice: 3000,
            exchangeSku: null,
            exchangeUnitPrice: null,
            weightOz: 12,
          },
        ],
      },
    ]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-label-created",
        detail: { returnId: t.returnId, trackingNumber: "RT1", carrier: "USPS" },
        key: runId,
      },
    ]);
    await expect(t.work.buyLabel(t.returnId, runId)).resolves.toEqual({
      trackingNumber: "RT1",
      created: false,
    });
    expect(t.labels.bought).toHaveLength(1);
  });

  it("weights unknown are left to the carrier's default; no address is an error", async () => {
    const t = setup();
    t.records.destinationAnswer = { shipping_address: address, weights: null };
    await t.work.buyLabel(t.returnId, runId);
    expect((t.labels.bought[0] as { lines: { weightOz: unknown }[] }).lines[0]?.weightOz).toBeNull();

    const lost = setup();
    lost.records.destinationAnswer = null;
    await expect(lost.work.buyLabel(lost.returnId, runId)).rejects.toThrow(
      `Order ${lost.order.id} has no address to send a return label from`,
    );
  });

  it("the return ended while the label was bought: the label goes back at once", async () => {
    const t = setup();
    t.records.afterLabel = () => {
      t.records.row.status = "cancelled";
    };
    await expect(t.work.buyLabel(t.returnId, runId)).resolves.toEqual({
      trackingNumber: "RT1",
      created: true,
      handedBack: "submitted",
    });
    expect(t.labels.handedBack).toEqual([[t.returnId, "return"]]);
    expect(t.records.writes).toEqual(["label RT1", "label-refund submitted"]);
    expect(t.entries[1]).toEqual({
      orderId: t.order.id,
      kind: "return-label-refund-requested",
      detail: {
        returnId: t.returnId,
        status: "submitted",
        label: "return",
        trackingNumber: "RT1",
        why: "the return was cancelled as it was bought",
      },
      key: runId,
    });
    expect(t.notices).toEqual([]);
  });

  it("the parcel received by hand while the label was bought: the unused label goes back, its e-mail is not sent", async () => {
    const t = setup();
    t.records.afterLabel = () => {
      t.records.row.status = "received";
    };
    await expect(t.work.buyLabel(t.returnId, runId)).resolves.toMatchObject({ handedBack: "submitted" });
    expect(t.labels.handedBack).toEqual([[t.returnId, "return"]]);
    expect(t.entries[1]?.detail).toMatchObject({ why: "the return was received as it was bought" });
    await expect(t.work.emailLabel(t.returnId, runId)).resolves.toEqual({ status: "skipped" });
    expect(t.sent).toEqual([]);
  });

  it("an unwanted label the carrier will not take back goes to ops; one it does not know is not recorded", async () => {
    for (const answer of ["not-voidable", "rejected"]) {
      const t = setup();
      t.labels.handBackAnswer = answer;
      t.records.afterLabel = () => {
        t.records.row.status = "rejected";
      };
      await t.work.buyLabel(t.returnId, runId);
      expect(t.notices).toEqual([
        {
          key: `unwanted-return-label-${t.returnId}`,
          title: "A return label bought for an ended return was not taken back",
          fields: expect.objectContaining({
            orderId: t.order.id,
            returnId: t.returnId,
            trackingNumber: "RT1",
          }),
        },
      ]);
    }
    const t = setup();
    t.labels.handBackAnswer = "not-found";
    t.records.afterLabel = () => {
      t.records.row.status = "closed";
    };
    await t.work.buyLabel(t.returnId, runId);
    expect(t.records.writes).toEqual(["label RT1"]);
    expect(t.notices).toEqual([]);
  });

  it("the undo hands back an unused label only", async () => {
    const none = setup();
    await expect(none.work.handBackLabel(none.returnId, runId)).resolves.toEqual({
      outcome: "no-label",
    });

    const received = setup({ row: { label_tracking_number: "RT1", received_at: new Date() } });
    await expect(received.work.handBackLabel(received.returnId, runId)).resolves.toEqual({
      outcome: "used",
    });
    const moving = setup({ row: { label_tracking_number: "RT1", label_tracker_status: "in_transit" } });
    await expect(moving.work.handBackLabel(moving.returnId, runId)).resolves.toEqual({
      outcome: "used",
    });
    expect(moving.labels.handedBack).toEqual([]);

    for (const tracker of [null, "unknown", "pre_transit"]) {
      const t = setup({ row: { label_tracking_number: "RT1", label_tracker_status: tracker } });
      await expect(t.work.handBackLabel(t.returnId, runId)).resolves.toEqual({
        outcome: "submitted",
      });
      expect(t.labels.handedBack).toEqual([[t.returnId]]);
      expect(t.records.writes).toEqual(["label-refund submitted"]);
      expect(t.entries).toEqual([
        {
          orderId: t.order.id,
          kind: "return-label-refund-requested",
          detail: { returnId: t.returnId, status: "submitted" },
          key: runId,
        },
      ]);
    }
    const unknown = setup({ row: { label_tracking_number: "RT1" } });
    unknown.labels.handBackAnswer = "not-found";
    await expect(unknown.work.handBackLabel(unknown.returnId, runId)).resolves.toEqual({
      outcome: "not-found",
    });
    expect(unknown.records.writes).toEqual([]);
  });
});

describe("the label e-mail (email-return-label.ts)", () => {
  const labelled = {
    label_tracking_number: "RT1",
    label_url: "https://label/RT1",
    label_tracking_url: "https://track/RT1",
  };

  it("e-mails the label once with what the refund will be, and records what it said", async () => {
    const t = setup({
      row: {
        ...labelled,
        lines: [
          { sku: "MUG", quantity: 1, unitPrice: 3000, exchangeSku: null, exchangeUnitPrice: null },
          { sku: "GONE", quantity: 2, unitPrice: 500, exchangeSku: null, exchangeUnitPrice: null },
        ],
      },
    });
    await expect(t.work.emailLabel(t.returnId, runId)).resolves.toEqual({ status: "sent" });
    expect(t.sent).toEqual([
      expect.objectContaining({
        idempotencyKey: `return-label-${t.returnId}`,
        orderId: t.order.id,
        template: "returnLabel",
        to: "buyer@example.com",
      }),
    ]);
    expect(t.sent[0]?.content.text).toContain(`https://shop/orders/${t.order.id}`);
    expect(t.records.writes).toEqual(["label-sent"]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-label-sent",
        detail: {
          returnId: t.returnId,
          labelUrl: "https://label/RT1",
          trackingNumber: "RT1",
          trackingUrl: "https://track/RT1",
          lines: [
            { name: "Mug", quantity: 1 },
            { name: "GONE", quantity: 2 },
          ],
          refundAmount: 3600,
          email: "sent",
        },
        key: runId,
      },
    ]);
  });

  it("a label without its own tracking link gets the carrier's", async () => {
    const t = setup({ row: { ...labelled, label_tracking_url: null } });
    await t.work.emailLabel(t.returnId, runId);
    expect(t.entries[0]?.detail.trackingUrl).toBe("https://carrier/RT1");
  });

  it("no label yet is an error; a label handed back as the return ended is not sent", async () => {
    const none = setup({ row: { label_url: "https://label/RT1" } });
    await expect(none.work.emailLabel(none.returnId, runId)).rejects.toThrow(
      `Return ${none.returnId} has no label yet`,
    );
    const noUrl = setup({ row: { label_tracking_number: "RT1" } });
    await expect(noUrl.work.emailLabel(noUrl.returnId, runId)).rejects.toThrow("has no label yet");

    const ended = setup({ row: { ...labelled, status: "cancelled", label_refund_status: "submitted" } });
    await expect(ended.work.emailLabel(ended.returnId, runId)).resolves.toEqual({
      status: "skipped",
    });
    expect(ended.sent).toEqual([]);
    // Ended but the label not handed back (yet): the customer still gets it.
    const kept = setup({ row: { ...labelled, status: "cancelled" } });
    await expect(kept.work.emailLabel(kept.returnId, runId)).resolves.toEqual({ status: "sent" });
    const handedBackButOpen = setup({ row: { ...labelled, label_refund_status: "rejected" } });
    await expect(handedBackButOpen.work.emailLabel(handedBackButOpen.returnId, runId)).resolves.toEqual({
      status: "sent",
    });
  });
});

describe("restock, write-off, close and expiry", () => {
  it("restocks once through the records, with the run", async () => {
    const t = setup();
    await expect(t.work.restock(t.returnId, runId)).resolves.toEqual({
      movements: [{ sku: "MUG", quantity: 1 }],
    });
    await expect(t.work.restock(t.returnId, runId)).resolves.toEqual({ movements: [] });
    expect(t.records.writes).toEqual([`restock ${runId}`]);
  });

  it("writes off once, on the timeline only for the write that landed", async () => {
    const t = setup();
    await expect(t.work.writeOff(t.returnId, runId)).resolves.toEqual({ writtenOff: true });
    await expect(t.work.writeOff(t.returnId, runId)).resolves.toEqual({ writtenOff: false });
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-written-off",
        detail: { returnId: t.returnId, lines: t.records.row.lines },
        key: runId,
      },
    ]);
  });

  it("closes a received return once; another status stays as it is", async () => {
    const t = setup({ row: { status: "received" } });
    await expect(t.work.close(t.returnId, runId)).resolves.toEqual({ status: "closed" });
    await expect(t.work.close(t.returnId, runId)).resolves.toEqual({ status: "closed" });
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "return-closed",
        detail: { returnId: t.returnId, by: "process-return" },
        key: runId,
      },
    ]);
    const rejected = setup({ row: { status: "rejected" } });
    await expect(rejected.work.close(rejected.returnId, runId)).resolves.toEqual({
      status: "rejected",
    });
    expect(rejected.entries).toEqual([]);
  });

  it("a return whose parcel never came is cancelled once; an ended one is left", async () => {
    for (const status of ["requested", "approved"] as const) {
      const t = setup({ row: { status } });
      const work = t.work;
      await expect(work.expire(t.returnId, runId)).resolves.toEqual({ status: "cancelled" });
      expect(t.records.writes).toEqual(["cancelled (no parcel within the return period)"]);
      expect(t.entries).toEqual([
        {
          orderId: t.order.id,
          kind: "return-cancelled",
          detail: { returnId: t.returnId, reason: "expired" },
          key: runId,
        },
      ]);
    }
    const closed = setup({ row: { status: "received" } });
    await expect(closed.work.expire(closed.returnId, runId)).resolves.toEqual({
      status: "received",
    });
    expect(closed.entries).toEqual([]);
  });

  it("a return that does not exist is an error naming it", async () => {
    const t = setup();
    await expect(t.ctx.load("00000000-0000-4000-8000-00000000dead")).rejects.toThrow(
      "Return 00000000-0000-4000-8000-00000000dead does not exist",
    );
    await expect(t.work.load(t.returnId)).resolves.toMatchObject({ id: t.returnId });
  });
});

describe("the exchange that failed (work/exchange-shipping.ts)", () => {
  it("an exchange is a return with a line asking for another item", () => {
    const t = setup();
    const work = t.work;
    expect(work.isExchange(t.records.row)).toBe(false);
    expect(
      work.isExchange({
        ...t.records.row,
        lines: [
          ...t.records.row.lines,
          { sku: "CUP", quantity: 1, unitPrice: 100, exchangeSku: "CUP-L", exchangeUnitPrice: 200 },
        ],
      }),
    ).toBe(true);
  });

  it("says on the timeline and to ops, once per return, what was undone", async () => {
    const t = setup({ row: { exchange_released_at: new Date(), exchange_charge_status: "refunded" } });
    const work = t.work;
    const detail = await work.failExchange(t.returnId, runId, "no rates");
    expect(detail).toEqual({
      returnId: t.returnId,
      reason: "no rates",
      released: true,
      chargeStatus: "refunded",
    });
    expect(t.entries).toEqual([{ orderId: t.order.id, kind: "exchange-failed", detail, key: runId }]);
    expect(t.notices).toEqual([
      {
        key: `exchange-failed-${t.returnId}`,
        title: "Exchange not shipped: its parcel could not be booked",
        fields: expect.objectContaining({
          orderId: t.order.id,
          returnId: t.returnId,
          reason: "no rates",
          chargeStatus: "refunded",
        }),
      },
    ]);
    const plain = setup();
    const none = await plain.work.failExchange(plain.returnId, runId, "x");
    expect(none).toMatchObject({ released: false, chargeStatus: null });
    expect(plain.notices[0]?.fields.chargeStatus).toBe("none");
  });
});

describe("the port production builds (src/inngest/steps/return-work.ts, work/context.ts)", () => {
  const exchange: ReturnRow["lines"] = [
    { sku: "MUG", quantity: 1, unitPrice: 3000, exchangeSku: "MUG-XL", exchangeUnitPrice: 3700 },
    { sku: "CUP", quantity: 2, unitPrice: 500, exchangeSku: "CUP-L", exchangeUnitPrice: 500 },
    { sku: "PLATE", quantity: 1, unitPrice: 800, exchangeSku: null, exchangeUnitPrice: null },
  ];

  it("each exchange method does its own step's work: charge, refund, reserve, release", async () => {
    const t = setup({ row: { lines: exchange } });
    await expect(t.work.chargeExchange(t.returnId, runId)).resolves.toEqual({
      outcome: "charged",
      amount: 700,
      paymentIntentId: "pi_exchange",
    });
    expect(t.payments.charges).toEqual([expect.objectContaining({ key: `exchange-charge-${t.returnId}` })]);
    await expect(t.work.refundExchangeCharge(t.returnId, runId)).resolves.toEqual({
      outcome: "refunded",
      amount: 700,
      refundId: "re_exchange",
    });
    expect(t.payments.refunds).toEqual([expect.objectContaining({ paymentIntentId: "pi_exchange" })]);
    await expect(t.work.reserveExchange(t.returnId, runId)).resolves.toEqual({
      movements: [
        { sku: "MUG-XL", delta: -1 },
        { sku: "CUP-L", delta: -2 },
      ],
    });
    await expect(t.work.releaseExchange(t.returnId, runId)).resolves.toEqual({
      movements: [
        { sku: "MUG-XL", delta: 1 },
        { sku: "CUP-L", delta: 2 },
      ],
    });
    expect(t.records.writes).toEqual([
      "exchange-charge charged 700",
      "exchange-charge-refund re_exchange",
      `reserve ${runId}`,
      `release ${runId}`,
    ]);
  });

  it("ships the exchange and e-mails it, its lines named from the catalog (an unknown one by its sku)", async () => {
    const t = setup({ row: { lines: exchange } });
    t.db.insert("product", { sku: "MUG-XL", name: "Mug XL" });
    await expect(t.work.shipExchange(t.returnId, runId)).resolves.toEqual({
      trackingNumber: "EX1",
      created: true,
    });
    expect(t.labels.shipped).toHaveLength(1);
    await expect(t.work.emailExchange(t.returnId, runId)).resolves.toEqual({ status: "sent" });
    expect(t.sent).toEqual([
      expect.objectContaining({ template: "exchangeShipped", to: "buyer@example.com" }),
    ]);
    expect(t.entries.find((e) => e.kind === "exchange-sent")?.detail.lines).toEqual([
      { name: "Mug XL", quantity: 1 },
      { name: "CUP-L", quantity: 2 },
    ]);
    expect(t.records.writes).toEqual(["exchange-label EX1", "exchange-sent"]);
  });

  it("the return ended as the exchange's parcel was booked: its label goes back, the return label's record untouched", async () => {
    for (const answer of ["submitted", "rejected"] as const) {
      const t = setup({ row: { lines: exchange } });
      t.labels.handBackAnswer = answer;
      t.records.afterExchange = () => {
        t.records.row.status = "rejected";
      };
      await t.work.shipExchange(t.returnId, runId);
      expect(t.labels.handedBack).toEqual([[t.returnId, "exchange"]]);
      // Only a return label's hand-back is recorded on the return's label fields.
      expect(t.records.writes).toEqual(["exchange-label EX1"]);
      expect(t.records.row.label_refund_status).toBeNull();
      expect(t.entries.filter((e) => e.kind === "return-label-refund-requested")).toEqual([
        {
          orderId: t.order.id,
          kind: "return-label-refund-requested",
          detail: {
            returnId: t.returnId,
            status: answer,
            label: "exchange",
            trackingNumber: "EX1",
            why: "the return was rejected as it was bought",
          },
          key: `${runId}/exchange`,
        },
      ]);
      expect(t.notices).toEqual(
        answer === "rejected"
          ? [
              {
                key: `unwanted-exchange-label-${t.returnId}`,
                title: "An exchange label bought for an ended return was not taken back",
                fields: {
                  orderId: t.order.id,
                  returnId: t.returnId,
                  trackingNumber: "EX1",
                  action: "Ask the carrier to refund the label; make sure no parcel is sent on it",
                },
              },
            ]
          : [],
      );
    }
  });

  it("every method on a return that does not exist fails naming it, and changes nothing", async () => {
    const t = setup();
    const missing = "00000000-0000-4000-8000-00000000dead";
    const methods = [
      "buyLabel",
      "handBackLabel",
      "emailLabel",
      "refund",
      "writeOff",
      "close",
      "chargeExchange",
      "refundExchangeCharge",
      "shipExchange",
      "emailExchange",
    ] as const;
    for (const method of methods) {
      await expect(t.work[method](missing, runId)).rejects.toThrow(`Return ${missing} does not exist`);
    }
    await expect(t.work.load(missing)).rejects.toThrow(`Return ${missing} does not exist`);
    expect(t.records.writes).toEqual([]);
    expect(t.entries).toEqual([]);
    expect(t.stripe.asked).toEqual([]);
    expect(t.payments.charges).toEqual([]);
  });
});
