import { defined } from "../support/defined";
import type { OpsNotice } from "../../src/alerts";
import { AppError } from "../../src/errors";
import type { SendEmailRequest } from "../../src/notifications/email-sender";
import { disputedRefundAlertKey } from "../../src/orders/disputed-amount";
import { createRefunds, overRefundAlertKey, type RefundRequest } from "../../src/orders/refund-order";
import { captureLog } from "../support/log-capture";
import { MoneyDb } from "../support/fakes/money-db";
import { MoneyStripe } from "../support/fakes/money-stripe";

/**
 * The refund use case (src/orders/refund-order.ts) on an in-memory database and Stripe
 * (test/support/fakes/money-db.ts, money-stripe.ts): its fast tier and the `refunds-disputes-fast`
 * mutation group. test/orders/refunds.test.ts stays the end-to-end check through the HTTP door.
 */

function setup(options: { captured?: number; refunded?: number; authorized?: number; status?: string } = {}) {
  const db = new MoneyDb();
  const stripe = new MoneyStripe();
  const captured = options.captured ?? 5000;
  addDecoy(db);
  const order = db.addOrder({
    captured,
    refunded: options.refunded ?? 0,
    status: options.status ?? "shipped",
  });
  stripe.addIntent(defined(order.paymentIntentId), { captured, amount: options.authorized ?? captured });
  const sent: SendEmailRequest[] = [];
  const sender = {
    failing: false,
    async send(request: SendEmailRequest) {
      if (this.failing) throw new Error("mail server down");
      sent.push(request);
      return { status: "sent" };
    },
  };
  const notices: OpsNotice[] = [];
  const alerts = { notify: async (notice: OpsNotice) => void notices.push(notice) };
  const fullRefunds: string[] = [];
  const log = captureLog();
  const hooks = {
    onFullRefund: async (orderId: string) => {
      fullRefunds.push(orderId);
    },
  };
  const refunds = createRefunds({
    db: db.asDatabase(),
    stripe: stripe.asStripe(),
    sender: sender as never,
    logger: log.logger,
    onFullRefund: (orderId) => hooks.onFullRefund(orderId),
    alerts,
  });
  const orderId = order.id;
  const intent = defined(stripe.intents.get(defined(order.paymentIntentId)));
  const ask = (request: Partial<RefundRequest> = {}) =>
    refunds.refund({ orderId, by: "ops-console", ...request });
  const messages = () => log.lines().map((line) => line.msg);
  const payment = () => defined(defined(db.tables.payment).find((row) => row.orderId === orderId));
  const rows = () => defined(db.tables.refund).filter((row) => row.orderId === orderId);
  return {
    db,
    stripe,
    intent,
    sender,
    sent,
    notices,
    fullRefunds,
    hooks,
    log,
    refunds,
    orderId,
    ask,
    messages,
    payment,
    rows,
  };
}

/**
 * Another order, stored first, with a payment, refunds in every status, a chargeback and timeline
 * entries: a lookup that loses its `where` (or a sort) reads these instead of the order's own.
 */
function addDecoy(db: MoneyDb): string {
  const decoy = db.addOrder({ captured: 9000, refunded: 1000, status: "shipped" });
  db.insert("refund", {
    orderId: decoy.id,
    amount: 1000,
    currency: "usd",
    status: "succeeded",
    providerId: "re_decoy",
  });
  db.insert("refund", {
    orderId: decoy.id,
    amount: 700,
    currency: "usd",
    status: "failed",
    error: "charge_disputed: x",
  });
  db.insert("dispute", {
    orderId: decoy.id,
    providerId: "dp_decoy",
    status: "needs_response",
    amount: 9000,
    currency: "usd",
    reason: "fraudulent",
    eventCreatedAt: db.now(),
  });
  db.insert("orderTimelineEntry", { orderId: decoy.id, kind: "refund-issued", detail: { refundId: "x" } });
  return decoy.id;
}

async function refusalOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

function addDispute(t: ReturnType<typeof setup>, providerId: string, status: string, amount: number) {
  t.db.insert("dispute", {
    orderId: t.orderId,
    providerId,
    status,
    amount,
    currency: "usd",
    reason: "fraudulent",
    eventCreatedAt: t.db.now(),
  });
}

describe("refunds (in-memory database and Stripe)", () => {
  it("refunds part: Stripe under the row's key, the row, the payment, the timeline and one e-mail", async () => {
    const t = setup();
    const outcome = await t.ask({ amount: 2000, reason: "scratched" });
    const row = defined(t.rows()[0]);
    expect(outcome).toEqual({
      refundId: row.id,
      orderId: t.orderId,
      amount: 2000,
      currency: "usd",
      status: "succeeded",
      providerId: "re_1",
      captured: 5000,
      refunded: 2000,
      refundable: 3000,
    });
    expect(t.stripe.asked).toEqual([
      {
        params: {
          payment_intent: t.intent.id,
          amount: 2000,
          metadata: {
            orderId: t.orderId,
            refundRequestId: row.id,
            requestedBy: "ops-console",
            reason: "scratched",
          },
        },
        idempotencyKey: `refund-${row.id}`,
      },
    ]);
    expect(row).toMatchObject({
      status: "succeeded",
      providerId: "re_1",
      amount: 2000,
      currency: "usd",
      reason: "scratched",
    });
    expect(t.payment()).toMatchObject({ amountRefunded: 2000, status: "captured" });
    expect(t.db.timeline(t.orderId).map((e) => [e.kind, e.detail])).toEqual([
      ["refund-requested", { refundId: row.id, amount: 2000, reason: "scratched", by: "ops-console" }],
      ["refund-issued", { refundId: row.id, stripeRefund: "re_1", amount: 2000, refunded: 2000 }],
    ]);
    expect(t.sent).toHaveLength(1);
    expect(t.sent[0]).toMatchObject({
      idempotencyKey: `refund-${row.id}`,
      orderId: t.orderId,
      template: "refunded",
      to: "buyer@example.com",
    });
    expect(defined(t.sent[0]).content.subject).toMatch(/^A refund of \$20\.00/);
    expect(t.fullRefunds).toEqual([]);
    expect(t.messages()).toContain("refund issued");
  });

  it("a reason is cut to Stripe's 500 characters; none is sent without one", async () => {
    const t = setup();
    await t.ask({ amount: 100, reason: "x".repeat(600) });
    expect((defined(t.stripe.asked[0]).params.metadata as Record<string, string>).reason).toHaveLength(500);
    await t.ask({ amount: 100 });
    expect(defined(t.stripe.asked[1]).params.metadata).not.toHaveProperty("reason");
    const second = defined(t.rows()[1]);
    expect(second.reason).toBeNull();
    expect(defined(t.db.timeline(t.orderId, "refund-requested")[1]).detail).toEqual({
      refundId: second.id,
      amount: 100,
      reason: null,
      by: "ops-console",
    });
  });

  it("refunds the rest without an amount: the payment is refunded, the label handed back, the e-mail says so", async () => {
    const t = setup();
    await t.ask({ amount: 1000 });
    const outcome = await t.ask({});
    expect(outcome).toMatchObject({ amount: 4000, refunded: 5000, refundable: 0, captured: 5000 });
    expect(t.payment()).toMatchObject({ amountRefunded: 5000, status: "refunded" });
    expect(t.fullRefunds).toEqual([t.orderId]);
    expect(defined(t.sent[1]).content.subject).toMatch(/has been refunded$/);
    const refused = await refusalOf(t.ask({ amount: 1 }));
    expect(refused.code).toBe("refund_exceeds_captured");
    expect(refused.details).toEqual({ requested: 1, captured: 5000, refunded: 5000, refundable: 0 });
    expect(t.stripe.asked).toHaveLength(2);
  });

  it("a full refund keeps the label when asked to, and a failing hand-back does not fail the refund", async () => {
    const kept = setup();
    await kept.ask({ handBackLabel: false });
    expect(kept.fullRefunds).toEqual([]);
    expect(kept.payment().status).toBe("refunded");

    const failing = setup();
    failing.hooks.onFullRefund = async () => {
      throw new Error("carrier down");
    };
    await expect(failing.ask({ amount: 5000 })).resolves.toMatchObject({ refundable: 0 });
    expect(failing.messages()).toContain("label not handed back after a full refund");
  });

  it("refuses more than is left, writing nothing and asking Stripe nothing; exactly what is left goes", async () => {
    const t = setup();
    await t.ask({ amount: 2000 });
    const refused = await refusalOf(t.ask({ amount: 3001 }));
    expect(refused.code).toBe("refund_exceeds_captured");
    expect(refused.message).toMatch(
      /exceeds what is left to refund .*: 3000 \(captured 5000, refunded 2000\)/,
    );
    expect(refused.details).toEqual({ requested: 3001, captured: 5000, refunded: 2000, refundable: 3000 });
    expect(t.rows()).toHaveLength(1);
    expect(t.stripe.asked).toHaveLength(1);
    await expect(t.ask({ amount: 3000 })).resolves.toMatchObject({ refundable: 0 });
  });

  it("counts a refund the workflow recorded on the payment only (a compensation)", async () => {
    const t = setup({ refunded: 1000 });
    t.intent.refunds.push({ id: "re_comp", amount: 1000, status: "succeeded" } as never);
    const refused = await refusalOf(t.ask({ amount: 4001 }));
    expect(refused.details).toMatchObject({ refunded: 1000, refundable: 4000 });
    await expect(t.ask({})).resolves.toMatchObject({ amount: 4000, refunded: 5000, refundable: 0 });
    // Everything is back: the outbound label goes back to the carrier, as after any full refund.
    expect(t.fullRefunds).toEqual([t.orderId]);
  });

  it("what is left after a compensation's refund is answered as the lock counts it", async () => {
    const t = setup({ refunded: 1000 });
    t.intent.refunds.push({ id: "re_comp", amount: 1000, status: "succeeded" } as never);
    await expect(t.ask({ amount: 1000 })).resolves.toMatchObject({ refunded: 2000, refundable: 3000 });
  });

  it("a refund recorded by another request after the model's look is caught under the payment's lock", async () => {
    const t = setup();
    t.db.beforeNextTransaction = () => {
      t.db.insert("refund", {
        orderId: t.orderId,
        amount: 5000,
        currency: "usd",
        status: "succeeded",
        providerId: "re_x",
      });
    };
    const refused = await refusalOf(t.ask({ amount: 1000 }));
    expect(refused.code).toBe("refund_exceeds_captured");
    expect(refused.message).toMatch(/already been refunded in full \(5000 of 5000 minor units\)/);
    expect(refused.details).toEqual({ requested: 1000, captured: 5000, refunded: 5000, refundable: 0 });
    expect(t.stripe.asked).toEqual([]);
  });

  it("refuses an order with nothing captured, no payment, or that does not exist, with the model's reasons", async () => {
    const uncaptured = setup({ captured: 0 });
    const nothing = await refusalOf(uncaptured.ask({ amount: 100 }));
    expect(nothing.code).toBe("order_not_refundable");
    expect(nothing.details).toEqual({ requested: 100, captured: 0, refunded: 0, refundable: 0 });
    const whole = await refusalOf(uncaptured.ask({}));
    expect(whole.details).toMatchObject({ requested: 0 });

    const refundedAll = setup({ refunded: 5000 });
    const all = await refusalOf(refundedAll.ask({}));
    expect(all.code).toBe("refund_exceeds_captured");
    expect(all.details).toEqual({ requested: 0, captured: 5000, refunded: 5000, refundable: 0 });

    const db = new MoneyDb();
    const noIntent = db.addOrder({ paymentIntentId: null });
    const refunds = createRefunds({
      db: db.asDatabase(),
      stripe: new MoneyStripe().asStripe(),
      sender: { send: async () => ({}) } as never,
      logger: captureLog().logger,
    });
    const unpaid = await refusalOf(refunds.refund({ orderId: noIntent.id, by: "admin-api" }));
    expect(unpaid.code).toBe("order_not_refundable");
    expect(unpaid.message).toMatch(/has no payment to refund/);
    const missing = await refusalOf(
      refunds.refund({ orderId: "00000000-0000-4000-8000-000000000000", by: "admin-api" }),
    );
    expect(missing.code).toBe("order_not_found");
  });

  it("a payment row that vanished before the lock is refused as not refundable", async () => {
    const t = setup();
    t.db.beforeNextTransaction = () => {
      t.db.tables.payment = [];
    };
    const refused = await refusalOf(t.ask({ amount: 100 }));
    expect(refused.code).toBe("order_not_refundable");
    expect(refused.message).toMatch(/has no captured payment to refund/);
  });

  it("a payment row whose capture is gone to zero before the lock is refused as not refundable", async () => {
    const t = setup();
    t.db.beforeNextTransaction = () => {
      t.payment().amountCaptured = 0;
    };
    expect((await refusalOf(t.ask({ amount: 100 }))).code).toBe("order_not_refundable");
  });

  it("an unknown Stripe outcome leaves the row pending; the next request settles it under its own key first", async () => {
    const t = setup();
    t.stripe.failCreates.push({ message: "socket hang up" });
    const lost = await refusalOf(t.ask({ amount: 1500 }));
    expect(lost.code).toBe("upstream_unavailable");
    const pending = defined(t.rows()[0]);
    expect(pending.status).toBe("pending");
    expect(t.payment().amountRefunded).toBe(0);
    expect(t.db.timeline(t.orderId)).toEqual([]);

    const next = await t.ask({ amount: 1000 });
    expect(t.stripe.asked.map((a) => a.idempotencyKey)).toEqual([
      `refund-${pending.id}`,
      `refund-${pending.id}`,
      `refund-${next.refundId}`,
    ]);
    expect(t.rows().map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    expect(t.payment().amountRefunded).toBe(2500);
    expect(next).toMatchObject({ refunded: 2500, refundable: 2500 });
    // The crashed request's asker is not known to the one that settles it.
    expect(t.db.timeline(t.orderId, "refund-requested").map((e) => e.detail)).toEqual([
      { refundId: pending.id, amount: 1500, reason: null, by: "unknown" },
      { refundId: next.refundId, amount: 1000, reason: null, by: "ops-console" },
    ]);
    expect(t.sent.map((m) => m.idempotencyKey)).toEqual([`refund-${pending.id}`, `refund-${next.refundId}`]);
  });

  it("pending rows are settled oldest first", async () => {
    const t = setup();
    const late = t.db.insert("refund", {
      orderId: t.orderId,
      amount: 300,
      currency: "usd",
      createdAt: new Date("2026-12-01T12:00:00Z"),
    });
    const early = t.db.insert("refund", {
      orderId: t.orderId,
      amount: 200,
      currency: "usd",
      createdAt: new Date("2026-12-01T11:00:00Z"),
    });
    await t.ask({ amount: 100 });
    expect(t.stripe.asked.map((a) => a.idempotencyKey).slice(0, 2)).toEqual([
      `refund-${early.id}`,
      `refund-${late.id}`,
    ]);
  });

  it("a refusal by Stripe writes nothing, drops the pending row and says why", async () => {
    for (const type of ["StripeInvalidRequestError", "StripeCardError"]) {
      const t = setup();
      t.stripe.failCreates.push({ type, code: "parameter_invalid", message: "bad amount" });
      const refused = await refusalOf(t.ask({ amount: 100 }));
      expect(refused.code).toBe("order_not_refundable");
      expect(refused.message).toBe("Stripe refused the refund: bad amount");
      expect(t.rows()).toEqual([]);
      expect(t.db.timeline(t.orderId)).toEqual([]);
      expect(t.notices).toEqual([]);
      expect(t.messages()).toContain("refund refused by Stripe");
    }
    const silent = setup();
    silent.stripe.failCreates.push({ type: "StripeInvalidRequestError" });
    expect((await refusalOf(silent.ask({ amount: 100 }))).message).toBe("Stripe refused the refund: unknown");
  });

  it("a refusal of a disputed charge is kept as a failed row and answered from it, ops told once per payment", async () => {
    const t = setup();
    t.intent.disputed = true;
    const refused = await refusalOf(t.ask({ amount: 100, refundId: "5d7f6a55-1c0e-4a39-9a57-5b0e0e6f0c01" }));
    expect(refused.code).toBe("charge_disputed");
    expect(refused.message).toMatch(/^Stripe refused the refund: Charge ch_.* has been disputed$/);
    expect(refused.details).toEqual({ requested: 100, disputes: [], paymentIntentId: t.intent.id });
    const row = defined(t.rows()[0]);
    expect(row).toMatchObject({
      status: "failed",
      error: `charge_disputed: Charge ch_${t.intent.id} has been disputed`,
    });
    expect(t.db.timeline(t.orderId).map((e) => [e.kind, e.detail])).toEqual([
      ["refund-requested", { refundId: row.id, amount: 100, reason: null, by: "ops-console" }],
      ["refund-failed", { refundId: row.id, error: `Charge ch_${t.intent.id} has been disputed` }],
    ]);
    expect(t.notices).toEqual([
      {
        key: disputedRefundAlertKey(t.intent.id),
        title: "Refund refused: the payment is disputed",
        fields: expect.objectContaining({
          orderId: t.orderId,
          dispute: "not yet recorded",
          disputed: undefined,
          requestedBy: "ops-console",
        }),
      },
    ]);
    expect(t.messages()).toContain("refund refused: the payment is disputed");

    // Asked again under the same id: the failed row answers, Stripe is not asked.
    const again = await refusalOf(t.ask({ amount: 100, refundId: row.id as string }));
    expect(again.code).toBe("charge_disputed");
    expect(again.message).toMatch(/^Refund .* was refused: charge_disputed: /);
    expect(again.details).toEqual({ requested: 100, disputes: [], paymentIntentId: t.intent.id });
    expect(t.stripe.asked).toHaveLength(1);
    expect(t.notices.map((n) => n.key)).toEqual([
      disputedRefundAlertKey(t.intent.id),
      disputedRefundAlertKey(t.intent.id),
    ]);
  });

  it("a disputed refusal without Stripe's message still records why", async () => {
    const t = setup();
    t.stripe.failCreates.push({ type: "StripeInvalidRequestError", code: "charge_disputed" });
    Object.assign(defined(t.stripe.failCreates[0]), { message: undefined });
    const refused = await refusalOf(t.ask({ amount: 100 }));
    expect(refused.code).toBe("charge_disputed");
    expect(refused.message).toBe("Stripe refused the refund: ");
    expect(defined(t.rows()[0]).error).toBe("charge_disputed: refused");
    expect(defined(t.db.timeline(t.orderId, "refund-failed")[0]).detail).toMatchObject({ error: null });
  });

  it("a refund row that failed otherwise is answered as refused, not asked again", async () => {
    const t = setup();
    const failed = t.db.insert("refund", {
      orderId: t.orderId,
      amount: 700,
      currency: "usd",
      status: "failed",
      error: "card expired",
    });
    const refused = await refusalOf(t.ask({ refundId: failed.id as string }));
    expect(refused.code).toBe("order_not_refundable");
    expect(refused.message).toBe(`Refund ${failed.id} was refused: card expired`);
    const bare = t.db.insert("refund", {
      orderId: t.orderId,
      amount: 700,
      currency: "usd",
      status: "failed",
    });
    expect((await refusalOf(t.ask({ refundId: bare.id as string }))).message).toBe(
      `Refund ${bare.id} was refused: `,
    );
    expect(t.stripe.asked).toEqual([]);
    expect(t.notices).toEqual([]);
  });

  it("asked again under its id, a refund made answers without a second one; another order's id is a conflict", async () => {
    const t = setup();
    const refundId = "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    const first = await t.ask({ amount: 1200, refundId, by: "process-return" });
    expect(first.refundId).toBe(refundId);
    const again = await t.ask({ amount: 1200, refundId, by: "process-return" });
    expect(again).toEqual(first);
    expect(t.stripe.asked).toHaveLength(1);
    expect(t.db.timeline(t.orderId, "refund-issued")).toHaveLength(1);
    expect(t.sent).toHaveLength(1);

    const other = t.db.addOrder({});
    const conflict = await refusalOf(t.refunds.refund({ orderId: other.id, refundId, by: "process-return" }));
    expect(conflict.code).toBe("conflict");
  });

  it("a row the caller named left pending is settled and answered with its own amount", async () => {
    const t = setup();
    const refundId = "7b1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    t.stripe.failCreates.push({ message: "timeout" });
    await refusalOf(t.ask({ amount: 900, refundId, by: "process-return" }));
    const outcome = await t.ask({ amount: 900, refundId, by: "process-return" });
    expect(outcome).toMatchObject({
      refundId,
      amount: 900,
      currency: "usd",
      providerId: "re_1",
      refunded: 900,
    });
    expect(t.stripe.asked.map((a) => a.idempotencyKey)).toEqual([`refund-${refundId}`, `refund-${refundId}`]);
  });

  it("an open or lost chargeback holds its amount: refunds reaching into it are refused with 409, ops told per dispute", async () => {
    const t = setup();
    addDispute(t, "dp_open", "needs_response", 2000);
    const refused = await refusalOf(t.ask({ amount: 3001 }));
    expect(refused.code).toBe("charge_disputed");
    expect(refused.httpStatus).toBe(409);
    expect(refused.message).toMatch(
      /disputed \(dp_open\): 2000 of it is with the card network, so a refund of 3001 is refused/,
    );
    expect(refused.details).toEqual({
      requested: 3001,
      refundable: 3000,
      disputed: 2000,
      disputes: ["dp_open"],
    });
    expect(t.rows()).toEqual([]);
    expect(t.stripe.asked).toEqual([]);
    expect(t.notices).toEqual([
      expect.objectContaining({
        key: disputedRefundAlertKey("dp_open"),
        fields: expect.objectContaining({ dispute: "dp_open", disputed: 2000, requestedBy: "ops-console" }),
      }),
    ]);
    // What the dispute does not hold can still be refunded.
    await expect(t.ask({ amount: 3000 })).resolves.toMatchObject({ amount: 3000 });
  });

  it("several holding disputes add up, listed oldest first; a return's refund names the return", async () => {
    const t = setup();
    addDispute(t, "dp_b", "lost", 1500);
    addDispute(t, "dp_a", "under_review", 1000);
    defined(t.db.tables.dispute?.find((d) => d.providerId === "dp_a")).createdAt = new Date(
      "2026-01-01T00:00:00Z",
    );
    const refused = await refusalOf(
      t.ask({ amount: 2501, by: "process-return", refundId: "8c1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d" }),
    );
    expect(refused.details).toEqual({
      requested: 2501,
      refundable: 2500,
      disputed: 2500,
      disputes: ["dp_a", "dp_b"],
    });
    expect(t.notices[0]).toMatchObject({
      key: disputedRefundAlertKey("dp_a"),
      fields: { dispute: "dp_a, dp_b", requestedBy: "return 8c1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d" },
    });
    const bare = setup();
    addDispute(bare, "dp_c", "lost", 5000);
    await refusalOf(bare.ask({ amount: 1, by: "process-return" }));
    expect(defined(bare.notices[0]).fields.requestedBy).toBe("return ");
    const all = await refusalOf(bare.ask({}));
    expect(all.details).toMatchObject({ refundable: 0, requested: 5000 });
  });

  it("a dispute won, closed as an inquiry or prevented holds nothing", async () => {
    const t = setup();
    addDispute(t, "dp_won", "won", 5000);
    addDispute(t, "dp_inq", "warning_needs_response", 5000);
    addDispute(t, "dp_closed", "warning_closed", 5000);
    await expect(t.ask({})).resolves.toMatchObject({ amount: 5000 });
    expect(t.notices).toEqual([]);
  });

  it("refused because the money is already back at Stripe: a return's request catches the payment up first", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 4000);
    const refused = await refusalOf(t.ask({ amount: 2000, catchUpOnRefusal: true, by: "process-return" }));
    expect(refused.code).toBe("order_not_refundable");
    expect(refused.message).toMatch(
      /already refunded at Stripe \(Refund amount \(2000\) is greater than unrefunded amount \(1000\)\)/,
    );
    expect(refused.details).toEqual({
      requested: 2000,
      refusedByStripe: "amount_too_large",
      refundedAtStripe: 4000,
      captured: 5000,
      refunded: 4000,
    });
    expect(t.payment()).toMatchObject({ amountRefunded: 4000, status: "captured" });
    expect(t.rows()).toEqual([]);
  });

  it("an ops request refused the same way writes nothing (decision 0170)", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 5000);
    defined(defined(t.db.tables.payment)[0]).amountRefunded = 0;
    const refused = await refusalOf(t.ask({ amount: 100 }));
    expect(refused.details).toEqual({
      requested: 100,
      refusedByStripe: "charge_already_refunded",
      refundedAtStripe: 5000,
    });
    expect(t.payment()).toMatchObject({ amountRefunded: 0, status: "captured" });
  });

  it("caught up in full, the payment is refunded; never lowered; Stripe unreadable leaves the records", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 5000);
    const refused = await refusalOf(t.ask({ amount: 100, catchUpOnRefusal: true }));
    expect(refused.details).toMatchObject({
      refusedByStripe: "charge_already_refunded",
      captured: 5000,
      refunded: 5000,
    });
    expect(t.payment()).toMatchObject({ amountRefunded: 5000, status: "refunded" });

    const lower = setup({ refunded: 3000 });
    lower.stripe.dashboardRefund(lower.intent.id, 5000);
    defined(lower.intent.refunds[0]).amount = 2000;
    lower.stripe.failCreates.push({
      type: "StripeInvalidRequestError",
      code: "amount_too_large",
      message: "too large",
    });
    const kept = await refusalOf(lower.ask({ amount: 1000, catchUpOnRefusal: true }));
    expect(kept.details).toMatchObject({ refundedAtStripe: 2000, refunded: 3000 });
    expect(lower.payment()).toMatchObject({ amountRefunded: 3000, status: "captured" });
    expect(lower.db.calls.filter((c) => c === "payment.update")).toEqual([]);

    const blind = setup();
    blind.stripe.failCreates.push({
      type: "StripeInvalidRequestError",
      code: "amount_too_large",
      message: "too large",
    });
    blind.stripe.failRetrieves = 1;
    const unread = await refusalOf(blind.ask({ amount: 100, catchUpOnRefusal: true }));
    expect(unread.details).toMatchObject({ refundedAtStripe: null, captured: 5000, refunded: 0 });
    expect(blind.messages()).toContain("refund recorded without Stripe's total");
  });

  it("the catch-up counts succeeded rows the webhook recorded", async () => {
    const t = setup();
    t.db.insert("refund", {
      orderId: t.orderId,
      amount: 2500,
      currency: "usd",
      status: "succeeded",
      providerId: "re_dash",
    });
    t.stripe.failCreates.push({
      type: "StripeInvalidRequestError",
      code: "amount_too_large",
      message: "too large",
    });
    t.stripe.failRetrieves = 1;
    const refused = await refusalOf(t.ask({ amount: 100, catchUpOnRefusal: true }));
    expect(refused.details).toMatchObject({ refunded: 2500 });
    expect(t.payment().amountRefunded).toBe(2500);
  });

  it("a refund landing beyond the capture is recorded, capped on the payment, and ops are told", async () => {
    const t = setup();
    t.stripe.onRefund = async () => {
      t.stripe.dashboardRefund(t.intent.id, 3000);
    };
    const outcome = await t.ask({ amount: 3000 });
    expect(outcome).toMatchObject({ refunded: 5000 });
    expect(t.payment()).toMatchObject({ amountRefunded: 5000, status: "refunded" });
    expect(t.db.timeline(t.orderId, "refund-over-captured").map((e) => e.detail)).toEqual([
      { refundId: outcome.refundId, stripeRefund: "re_1", amount: 3000, captured: 5000, over: 1000 },
    ]);
    expect(t.notices).toEqual([
      {
        key: overRefundAlertKey(t.orderId),
        title: "Refunded more than was captured",
        fields: expect.objectContaining({
          orderId: t.orderId,
          refund: `${outcome.refundId} (re_1)`,
          captured: 5000,
          over: 1000,
        }),
      },
    ]);
    expect(t.messages()).toContain("refunded beyond the capture");
  });

  it("Stripe's total unreadable after the refund: the rows decide", async () => {
    const t = setup();
    t.stripe.onRefund = async () => {
      t.stripe.failRetrieves = 1;
    };
    await expect(t.ask({ amount: 1000 })).resolves.toMatchObject({ refunded: 1000 });
    expect(t.messages()).toContain("refund recorded without Stripe's total");
  });

  it("a partial capture's released remainder is not counted as refunded", async () => {
    const t = setup({ captured: 5000, authorized: 7500 });
    await expect(t.ask({})).resolves.toMatchObject({ amount: 5000, refunded: 5000 });
    expect(t.db.timeline(t.orderId, "refund-over-captured")).toEqual([]);
  });

  it("Stripe's webhook settling the row first: the request and its outcome are still recorded, once", async () => {
    const t = setup();
    t.stripe.onRefund = async (refund) => {
      await t.db.refund.updateMany({
        where: { id: defined(refund.metadata).refundRequestId, orderId: t.orderId },
        data: { status: "succeeded", providerId: refund.id },
      });
    };
    const outcome = await t.ask({ amount: 1500 });
    expect(t.db.timeline(t.orderId).map((e) => e.kind)).toEqual(["refund-requested", "refund-issued"]);
    expect(t.payment().amountRefunded).toBe(1500);
    expect(t.sent).toHaveLength(1);

    expect(outcome.providerId).toBe("re_1");
  });

  it("a row a webhook settled with another Stripe refund is not recorded again", async () => {
    const t = setup();
    t.stripe.onRefund = async (refund) => {
      await t.db.refund.updateMany({
        where: { id: defined(refund.metadata).refundRequestId },
        data: { status: "succeeded", providerId: "re_other" },
      });
    };
    await t.ask({ amount: 1500 });
    expect(t.db.timeline(t.orderId)).toEqual([]);
    expect(t.payment().amountRefunded).toBe(0);
  });

  it("a request that died after Stripe's answer: the webhook's recordLanded records it as its asker's, once", async () => {
    const t = setup();
    t.stripe.onRefund = async () => {
      throw new Error("the process died here");
    };
    expect((await refusalOf(t.ask({ amount: 1500, reason: "dented" }))).code).toBe("upstream_unavailable");
    const row = defined(t.rows()[0]);
    expect(row.status).toBe("pending");
    expect(t.db.timeline(t.orderId)).toEqual([]);
    const landed = {
      orderId: t.orderId,
      requestId: String(row.id),
      providerId: "re_1",
      by: "ops-console",
      atStripe: 1500,
    };

    await expect(t.refunds.recordLanded(landed)).resolves.toBe(true);
    expect(defined(t.rows()[0])).toMatchObject({ status: "succeeded", providerId: "re_1" });
    expect(t.payment().amountRefunded).toBe(1500);
    expect(t.db.timeline(t.orderId).map((e) => [e.kind, e.detail])).toEqual([
      ["refund-requested", { refundId: row.id, amount: 1500, reason: "dented", by: "ops-console" }],
      ["refund-issued", { refundId: row.id, stripeRefund: "re_1", amount: 1500, refunded: 1500 }],
    ]);
    expect(t.sent.map((m) => m.idempotencyKey)).toEqual([`refund-${row.id}`]);
    expect(t.messages()).toContain("refund issued");

    // The refund's other events, and the request asked again: recorded already.
    await expect(t.refunds.recordLanded(landed)).resolves.toBe(false);
    delete t.stripe.onRefund;
    await t.ask({ amount: 1500, refundId: landed.requestId });
    expect(t.db.timeline(t.orderId)).toHaveLength(2);
    expect(t.sent).toHaveLength(1);
  });

  it("recordLanded leaves alone another order's row, a failed row, and names no asker it was not told", async () => {
    const t = setup();
    t.stripe.onRefund = async () => {
      throw new Error("the process died here");
    };
    await refusalOf(t.ask({ amount: 1000 }));
    const row = defined(t.rows()[0]);
    const landed = { orderId: t.orderId, requestId: String(row.id), providerId: "re_1", atStripe: 1000 };
    await expect(
      t.refunds.recordLanded({ ...landed, orderId: "00000000-0000-4000-8000-000000000000" }),
    ).resolves.toBe(false);
    await expect(
      t.refunds.recordLanded({ ...landed, requestId: "00000000-0000-4000-8000-000000000001" }),
    ).resolves.toBe(false);
    await t.db.refund.updateMany({ where: { id: row.id }, data: { status: "failed" } });
    await expect(t.refunds.recordLanded(landed)).resolves.toBe(false);
    expect(t.db.timeline(t.orderId)).toEqual([]);
    await t.db.refund.updateMany({ where: { id: row.id }, data: { status: "pending" } });
    await expect(t.refunds.recordLanded(landed)).resolves.toBe(true);
    expect(defined(t.db.timeline(t.orderId, "refund-requested")[0]).detail).toMatchObject({ by: "unknown" });
  });

  it("a mail outage does not turn a refund made into an error", async () => {
    const t = setup();
    t.sender.failing = true;
    await expect(t.ask({ amount: 500 })).resolves.toMatchObject({ amount: 500 });
    expect(t.messages()).toContain("refund e-mail not sent");
  });

  it("says what it refused in words and under stable keys", async () => {
    const t = setup();
    addDispute(t, "dp_b", "under_review", 1000);
    addDispute(t, "dp_c", "lost", 1000);
    const refused = await refusalOf(t.ask({ amount: 4000 }));
    expect(refused.message).toBe(
      `Order ${t.orderId}'s payment is disputed (dp_b, dp_c): 2000 of it is with the card network, so a refund of 4000 is refused. Answer or accept the dispute in the Stripe Dashboard instead`,
    );
    expect(t.notices[0]).toMatchObject({
      key: "refund-refused-disputed-dp_b",
      fields: {
        action: expect.stringMatching(
          /^Refund nothing outside the dispute: accept it in the Stripe Dashboard/,
        ),
      },
    });
    const log = t.log.lines().find((line) => line.msg === "refund refused: the payment is disputed");
    expect(log).toMatchObject({ orderId: t.orderId, by: "ops-console" });
    expect(overRefundAlertKey("o-1")).toBe("refund-over-captured-o-1");
  });

  it("the over-capture alert tells ops what to do", async () => {
    const t = setup();
    t.stripe.onRefund = async () => {
      t.stripe.dashboardRefund(t.intent.id, 4500);
    };
    await t.ask({ amount: 1000 });
    expect(t.notices[0]).toMatchObject({
      key: `refund-over-captured-${t.orderId}`,
      fields: {
        action: expect.stringMatching(
          /^A refund cannot be undone at Stripe: recover the amount over the capture/,
        ),
      },
    });
  });

  it("without an alerter a disputed or over-captured refund still answers", async () => {
    const db = new MoneyDb();
    const stripe = new MoneyStripe();
    const order = db.addOrder({ captured: 5000 });
    const intent = stripe.addIntent(defined(order.paymentIntentId));
    const refunds = createRefunds({
      db: db.asDatabase(),
      stripe: stripe.asStripe(),
      sender: { send: async () => ({ status: "sent" }) } as never,
      logger: captureLog().logger,
    });
    stripe.onRefund = async () => {
      stripe.dashboardRefund(intent.id, 4500);
    };
    await expect(refunds.refund({ orderId: order.id, amount: 1000, by: "admin-api" })).resolves.toMatchObject(
      { amount: 1000 },
    );
    intent.disputed = true;
    db.insert("refund", { orderId: order.id, amount: 1, currency: "usd", status: "failed", error: "x" });
    db.tables.payment = [];
    const other = db.addOrder({ captured: 5000 });
    stripe.addIntent(defined(other.paymentIntentId), { disputed: true });
    const refused = await refusalOf(refunds.refund({ orderId: other.id, amount: 100, by: "admin-api" }));
    expect(refused.code).toBe("charge_disputed");
  });

  it("the lock's check catches a race that leaves nothing, even for a request of everything", async () => {
    const t = setup();
    t.db.beforeNextTransaction = () => {
      t.db.insert("refund", {
        orderId: t.orderId,
        amount: 5000,
        currency: "usd",
        status: "succeeded",
        providerId: "re_y",
      });
    };
    const refused = await refusalOf(t.ask({}));
    expect(refused.code).toBe("refund_exceeds_captured");
    expect(refused.message).toMatch(/already been refunded in full/);
    expect(t.rows().filter((row) => row.status === "pending")).toEqual([]);
  });

  it("a pending row Stripe refuses as disputed is kept failed, its asker unknown", async () => {
    const t = setup();
    const pending = t.db.insert("refund", { orderId: t.orderId, amount: 400, currency: "usd" });
    t.intent.disputed = true;
    await refusalOf(t.ask({ amount: 100 }));
    expect(t.db.timeline(t.orderId, "refund-requested").map((e) => e.detail)).toEqual([
      { refundId: pending.id, amount: 400, reason: null, by: "unknown" },
    ]);
    expect(t.rows().find((row) => row.id === pending.id)).toMatchObject({ status: "failed" });
  });

  it("Stripe unreachable is said as such", async () => {
    const t = setup();
    t.stripe.failCreates.push({ message: "ECONNRESET" });
    const refused = await refusalOf(t.ask({ amount: 100 }));
    expect(refused.message).toBe("The payment provider is unavailable; please try again");
  });

  it("the payment's own total counts when Stripe's cannot be read after the refund", async () => {
    const t = setup({ refunded: 3000 });
    t.intent.refunds.push({ id: "re_comp", amount: 3000, status: "succeeded" } as never);
    t.stripe.onRefund = async () => {
      t.stripe.failRetrieves = 1;
    };
    await expect(t.ask({ amount: 1000 })).resolves.toMatchObject({ amount: 1000 });
    expect(t.payment().amountRefunded).toBe(3000);
  });

  it("a model refusal names the action and never a negative refundable", async () => {
    const t = setup();
    t.db.insert("refund", {
      orderId: t.orderId,
      amount: 6000,
      currency: "usd",
      status: "succeeded",
      providerId: "re_over",
    });
    const refused = await refusalOf(t.ask({ amount: 100 }));
    expect(refused.message).toMatch(/cannot be refunded/);
    expect(refused.details).toEqual({ requested: 100, captured: 5000, refunded: 6000, refundable: 0 });
  });

  it("an order gone between the first look and the model's is not found", async () => {
    const t = setup();
    t.db.before("$queryRawUnsafe", () => {
      t.db.tables.order = defined(t.db.tables.order).filter((row) => row.id !== t.orderId);
    });
    const refused = await refusalOf(t.ask({ amount: 100 }));
    expect(refused.code).toBe("order_not_found");
    expect(refused.message).toBe(`Order ${t.orderId} does not exist`);
    const missing = await refusalOf(
      t.refunds.refund({ orderId: "00000000-0000-4000-8000-00000000beef", by: "admin-api" }),
    );
    expect(missing.message).toBe("Order 00000000-0000-4000-8000-00000000beef does not exist");
  });

  it("a refund id of another order is refused by name", async () => {
    const t = setup();
    const other = t.db.addOrder({});
    const theirs = t.db.insert("refund", {
      orderId: other.id,
      amount: 1,
      currency: "usd",
      status: "succeeded",
    });
    const refused = await refusalOf(t.ask({ refundId: theirs.id as string }));
    expect(refused.message).toBe(`Refund ${theirs.id} belongs to another order`);
  });

  it("two requests settling one pending row record it once", async () => {
    const t = setup();
    const pending = t.db.insert("refund", { orderId: t.orderId, amount: 400, currency: "usd" });
    await Promise.all([t.ask({ amount: 100 }), t.ask({ amount: 200 })]);
    expect(
      t.db
        .timeline(t.orderId, "refund-issued")
        .filter((e) => (e.detail as { refundId: string }).refundId === pending.id),
    ).toHaveLength(1);
    expect(t.payment().amountRefunded).toBe(700);
  });

  it("a row the webhook marked failed with this Stripe refund is not recorded as issued", async () => {
    const t = setup();
    t.stripe.onRefund = async (refund) => {
      const row = defined(t.rows().find((r) => r.id === refund.metadata?.refundRequestId));
      Object.assign(row, { status: "failed", providerId: refund.id });
    };
    await t.ask({ amount: 1500 });
    expect(t.db.timeline(t.orderId)).toEqual([]);
  });

  it("the e-mail lists the order's lines in sku order", async () => {
    const t = setup();
    t.db.insert("orderLine", { orderId: t.orderId, sku: "AAA", name: "Apron", quantity: 1, unitPrice: 100 });
    await t.ask({ amount: 100 });
    const text = defined(t.sent[0]).content.text;
    expect(text.indexOf("Apron")).toBeGreaterThan(-1);
    expect(text.indexOf("Apron")).toBeLessThan(text.indexOf("Mug"));
  });
});
