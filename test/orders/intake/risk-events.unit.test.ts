import { defined } from "../../support/defined";
import type { OpsNotice } from "../../../src/alerts";
import { createRiskEvents, isRiskEvent, riskEventTypes } from "../../../src/orders/intake/risk-events";
import { stripeEvent } from "../../support/fakes/intake";
import { MoneyDb, PrismaError } from "../../support/fakes/money-db";
import { MoneyStripe } from "../../support/fakes/money-stripe";
import { captureLog } from "../../support/log-capture";

/**
 * Disputes, Radar reviews and early fraud warnings (src/orders/intake/risk-events.ts) on an
 * in-memory database and Stripe: the fast tier of the `refunds-disputes-fast` mutation group.
 * test/orders/intake/dispute-states.test.ts stays the check against PostgreSQL.
 */

const created = 1_700_000_000;

function setup(options: { shipped?: boolean } = {}) {
  const db = new MoneyDb();
  const stripe = new MoneyStripe();
  const order = db.addOrder({ status: options.shipped ? "shipped" : "paid" });
  const intent = stripe.addIntent(defined(order.paymentIntentId));
  if (options.shipped)
    db.insert("shipment", { orderId: order.id, carrier: "ups", trackingNumber: "1Z1", parcelNumber: 1 });
  const holds: unknown[][] = [];
  const releases: unknown[][] = [];
  const entries: { orderId: string; kind: string; detail: unknown; key?: string }[] = [];
  const notices: OpsNotice[] = [];
  const log = captureLog();
  const holdPort = {
    answer: { reason: "dispute" } as unknown,
    async placeHold(...args: unknown[]) {
      holds.push(args);
      return this.answer;
    },
    async releaseHold(...args: unknown[]) {
      releases.push(args);
      return null;
    },
  };
  const events = createRiskEvents({
    db: db.asDatabase(),
    stripe: stripe.asStripe(),
    holds: holdPort as never,
    timeline: {
      record: async (orderId, kind, detail, key) => void entries.push({ orderId, kind, detail, key }),
    },
    alerts: { notify: async (notice) => void notices.push(notice) },
    logger: log.logger,
  });
  const dispute = (fields: Record<string, unknown> = {}) => ({
    id: "dp_1",
    object: "dispute",
    charge: intent.chargeId,
    payment_intent: null,
    status: "needs_response",
    amount: 5000,
    currency: "usd",
    reason: "fraudulent",
    evidence_details: { due_by: created + 86_400 },
    balance_transactions: [{ amount: -5000, fee: 1500 }],
    ...fields,
  });
  const at = (type: string, object: object, seconds = 0) => ({
    ...stripeEvent(type, object),
    created: created + seconds,
  });
  const row = () => defined(db.tables.dispute).find((each) => each.providerId === "dp_1");
  const messages = () => log.lines().map((line) => line.msg);
  return {
    db,
    stripe,
    intent,
    order,
    holds,
    holdPort,
    releases,
    entries,
    notices,
    events,
    dispute,
    at,
    row,
    messages,
  };
}

describe("risk events (in-memory database and Stripe)", () => {
  it("names the events it handles", () => {
    expect(riskEventTypes).toEqual([
      "charge.dispute.created",
      "charge.dispute.updated",
      "charge.dispute.closed",
      "charge.dispute.funds_withdrawn",
      "charge.dispute.funds_reinstated",
      "review.opened",
      "review.closed",
      "radar.early_fraud_warning.created",
    ]);
    for (const type of riskEventTypes) expect(isRiskEvent(stripeEvent(type, {}))).toBe(true);
    expect(isRiskEvent(stripeEvent("charge.refunded", {}))).toBe(false);
  });

  it("a dispute of an unshipped order: recorded, on the timeline, the order held, ops told with the evidence", async () => {
    const t = setup();
    const event = t.at("charge.dispute.created", t.dispute());
    const result = await t.events.handle(event);
    expect(result).toEqual({ outcome: "processed", orderId: t.order.id, announced: false });
    const dueBy = new Date((created + 86_400) * 1000);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "dispute-updated",
        detail: {
          dispute: "dp_1",
          event: "charge.dispute.created",
          status: "needs_response",
          amount: 5000,
          currency: "usd",
          reason: "fraudulent",
          evidenceDueBy: dueBy.toISOString(),
          withdrawn: [{ amount: -5000, fee: 1500 }],
        },
        key: "dp_1:charge.dispute.created",
      },
    ]);
    expect(t.row()).toMatchObject({
      orderId: t.order.id,
      status: "needs_response",
      amount: 5000,
      currency: "usd",
      reason: "fraudulent",
      evidenceDueBy: dueBy,
      amountWithdrawn: 5000,
      amountReinstated: 0,
      fees: 1500,
      eventCreatedAt: new Date(created * 1000),
    });
    expect(t.holds).toEqual([[t.order.id, "dispute", { note: "fraudulent", by: "stripe" }]]);
    expect(t.notices).toEqual([
      {
        key: "dispute-created-dp_1",
        title: "Payment disputed: order held, no label",
        fields: {
          orderId: t.order.id,
          dispute: "dp_1",
          amount: "5000 usd",
          reason: "fraudulent",
          evidenceDueBy: dueBy.toISOString(),
          trackingNumber: "none",
          deliveredAt: "not delivered",
          emailsSent: "none",
          action: "Answer the dispute in the Stripe Dashboard before the due date",
        },
      },
    ]);
  });

  it("a dispute of a shipped order holds nothing and offers every parcel and e-mail as evidence", async () => {
    const t = setup({ shipped: true });
    defined(defined(t.db.tables.shipment)[0]).deliveredAt = new Date("2026-11-03T10:00:00Z");
    t.db.insert("shipment", {
      orderId: t.order.id,
      carrier: "usps",
      trackingNumber: "94001",
      parcelNumber: 2,
      deliveredAt: new Date("2026-11-05T10:00:00Z"),
    });
    t.db.insert("shipment", {
      orderId: t.order.id,
      carrier: "fedex",
      trackingNumber: "OLD",
      parcelNumber: 0,
      supersededAt: new Date(),
    });
    t.db.insert("emailMessage", {
      orderId: t.order.id,
      template: "confirmation",
      status: "sent",
      sentAt: new Date("2026-11-01T09:00:00Z"),
    });
    t.db.insert("emailMessage", { orderId: t.order.id, template: "shipped", status: "sent", sentAt: null });
    t.db.insert("emailMessage", { orderId: t.order.id, template: "review", status: "queued", sentAt: null });
    // Stored before its sibling, the first parcel still comes first (by parcel number).
    defined(t.db.tables.shipment?.[0]).parcelNumber = 3;
    await t.events.handle(t.at("charge.dispute.created", t.dispute()));
    expect(t.holds).toEqual([]);
    expect(defined(t.notices[0]).title).toBe("Payment disputed");
    expect(defined(t.notices[0]).fields).toMatchObject({
      trackingNumber: "usps 94001, ups 1Z1",
      deliveredAt: "2026-11-05T10:00:00.000Z",
      emailsSent: "confirmation 2026-11-01T09:00:00.000Z, shipped",
    });
  });

  it("the latest delivery of several parcels is the evidence, in whatever order they were delivered", async () => {
    const t = setup({ shipped: true });
    defined(defined(t.db.tables.shipment)[0]).deliveredAt = new Date("2026-11-09T10:00:00Z");
    t.db.insert("shipment", {
      orderId: t.order.id,
      carrier: "usps",
      trackingNumber: "94001",
      parcelNumber: 2,
      deliveredAt: new Date("2026-11-05T10:00:00Z"),
    });
    await t.events.handle(t.at("charge.dispute.created", t.dispute()));
    expect(defined(t.notices[0]).fields.deliveredAt).toBe("2026-11-09T10:00:00.000Z");
  });

  it("one parcel not delivered: the order is not delivered", async () => {
    const t = setup({ shipped: true });
    t.db.insert("shipment", {
      orderId: t.order.id,
      carrier: "usps",
      trackingNumber: "94001",
      parcelNumber: 2,
      deliveredAt: new Date("2026-11-05T10:00:00Z"),
    });
    await t.events.handle(t.at("charge.dispute.created", t.dispute()));
    expect(defined(t.notices[0]).fields.deliveredAt).toBe("not delivered");
  });

  it("a hold refused (held already for another reason) is said in the title", async () => {
    const t = setup();
    t.holdPort.answer = null;
    await t.events.handle(t.at("charge.dispute.created", t.dispute()));
    expect(t.holds).toHaveLength(1);
    expect(defined(t.notices[0]).title).toBe("Payment disputed");
  });

  it("a dispute without a due date or balance transactions is recorded with none", async () => {
    const t = setup();
    await t.events.handle(
      t.at(
        "charge.dispute.created",
        t.dispute({ evidence_details: undefined, balance_transactions: undefined }),
      ),
    );
    expect(t.row()).toMatchObject({ evidenceDueBy: null, amountWithdrawn: 0, amountReinstated: 0, fees: 0 });
    expect(defined(t.entries[0]).detail).toMatchObject({ evidenceDueBy: undefined, withdrawn: undefined });
    await t.events.handle(t.at("charge.dispute.updated", t.dispute({ evidence_details: { due_by: 0 } }), 1));
    expect(defined(t.row()).evidenceDueBy).toBeNull();
  });

  it("later events bring the row up to date; an older one changes nothing; only `created` alerts", async () => {
    const t = setup();
    await t.events.handle(t.at("charge.dispute.created", t.dispute(), 10));
    await t.events.handle(t.at("charge.dispute.updated", t.dispute({ status: "under_review" }), 20));
    expect(t.row()).toMatchObject({
      status: "under_review",
      eventCreatedAt: new Date((created + 20) * 1000),
    });
    await t.events.handle(t.at("charge.dispute.updated", t.dispute({ status: "needs_response" }), 15));
    expect(defined(t.row()).status).toBe("under_review");
    // Reinstated money and fees are counted apart from what was withdrawn.
    await t.events.handle(
      t.at(
        "charge.dispute.funds_reinstated",
        t.dispute({
          status: "won",
          balance_transactions: [
            { amount: -5000, fee: 1500 },
            { amount: 5000, fee: -1500 },
          ],
        }),
        20,
      ),
    );
    expect(t.row()).toMatchObject({ status: "won", amountWithdrawn: 5000, amountReinstated: 5000, fees: 0 });
    expect(t.notices).toHaveLength(1);
    expect(t.holds).toHaveLength(1);
    expect(t.entries.map((e) => e.key)).toEqual([
      "dp_1:charge.dispute.created",
      "dp_1:charge.dispute.updated",
      "dp_1:charge.dispute.updated",
      "dp_1:charge.dispute.funds_reinstated",
    ]);
  });

  it("two open events of the same second: the later delivery lands", async () => {
    const t = setup();
    await t.events.handle(t.at("charge.dispute.created", t.dispute(), 10));
    await t.events.handle(t.at("charge.dispute.updated", t.dispute({ status: "under_review" }), 10));
    expect(defined(t.row()).status).toBe("under_review");
  });

  it("a closed dispute is not reopened by an open event, even of the same second; a final one still lands", async () => {
    const t = setup();
    await t.events.handle(t.at("charge.dispute.closed", t.dispute({ status: "won" }), 10));
    await t.events.handle(t.at("charge.dispute.updated", t.dispute({ status: "under_review" }), 10));
    await t.events.handle(t.at("charge.dispute.updated", t.dispute({ status: "under_review" }), 30));
    expect(defined(t.row()).status).toBe("won");
    for (const status of ["lost", "warning_closed", "prevented", "charge_refunded"]) {
      await t.events.handle(t.at("charge.dispute.closed", t.dispute({ status }), 40));
      expect(defined(t.row()).status).toBe(status);
      await t.events.handle(t.at("charge.dispute.updated", t.dispute({ status: "needs_response" }), 50));
      expect(defined(t.row()).status).toBe(status);
    }
  });

  it("a database error other than the duplicate fails the delivery", async () => {
    const t = setup();
    t.db.dispute.create = async () => {
      throw new PrismaError("P1001", "Can't reach database server");
    };
    await expect(t.events.handle(t.at("charge.dispute.created", t.dispute()))).rejects.toThrow(
      "Can't reach database server",
    );
    expect(t.db.calls).not.toContain("dispute.updateMany");
  });

  it("a dispute naming its payment intent needs no charge lookup", async () => {
    const t = setup();
    const retrieve = jest.spyOn(t.stripe.client.charges, "retrieve");
    await t.events.handle(
      t.at("charge.dispute.created", t.dispute({ charge: null, payment_intent: t.intent.id })),
    );
    expect(retrieve).not.toHaveBeenCalled();
    expect(t.row()).toBeDefined();
    await t.events.handle(
      t.at("charge.dispute.updated", t.dispute({ charge: null, payment_intent: { id: t.intent.id } }), 5),
    );
    expect(t.entries).toHaveLength(2);
  });

  it("finds the order by its payment's Stripe id", async () => {
    const t = setup();
    defined(defined(t.db.tables.order)[0]).paymentIntentId = null;
    await expect(t.events.handle(t.at("charge.dispute.created", t.dispute()))).resolves.toMatchObject({
      orderId: t.order.id,
    });
  });

  it("an object naming no payment, or one of no order of ours, is answered unknown-order", async () => {
    const t = setup();
    const none = await t.events.handle(t.at("charge.dispute.created", t.dispute({ charge: null })));
    expect(none).toEqual({ outcome: "unknown-order", announced: false });
    const stranger = await t.events.handle(
      t.at("charge.dispute.created", t.dispute({ charge: "ch_stranger" })),
    );
    expect(stranger).toEqual({ outcome: "unknown-order", announced: false });
    const other = await t.events.handle(t.at("review.opened", { id: "prv_1", payment_intent: "pi_other" }));
    expect(other.outcome).toBe("unknown-order");
    expect(t.messages()).toContain("dispute or review for an order we do not know");
    expect(t.entries).toEqual([]);
    expect(t.db.tables.dispute).toEqual([]);
  });

  it("a Radar review holds an unshipped order until it closes approved", async () => {
    const t = setup();
    const opened = await t.events.handle(
      t.at("review.opened", { id: "prv_1", payment_intent: t.intent.id, reason: "rule" }),
    );
    expect(opened).toEqual({ outcome: "processed", orderId: t.order.id, announced: false });
    expect(t.entries).toEqual([
      { orderId: t.order.id, kind: "radar-review", detail: { review: "prv_1", open: true }, key: "prv_1" },
    ]);
    expect(t.holds).toEqual([[t.order.id, "radar_review", { note: "rule", by: "stripe" }]]);
    const closed = await t.events.handle(
      t.at("review.closed", { id: "prv_1", payment_intent: t.intent.id, closed_reason: "approved" }),
    );
    expect(closed).toEqual({ outcome: "processed", orderId: t.order.id, announced: false });
    expect(t.entries[1]).toEqual({
      orderId: t.order.id,
      kind: "radar-review",
      detail: { review: "prv_1", open: false, closedReason: "approved" },
      key: "prv_1:closed",
    });
    expect(t.releases).toEqual([[t.order.id, { by: "stripe", onlyReason: "radar_review" }]]);
    expect(t.notices).toEqual([]);
  });

  it("a review of a shipped order holds nothing", async () => {
    const t = setup({ shipped: true });
    await t.events.handle(
      t.at("review.opened", { id: "prv_1", payment_intent: t.intent.id, reason: "rule" }),
    );
    expect(t.holds).toEqual([]);
    expect(t.entries).toHaveLength(1);
  });

  it("a review closed otherwise keeps the hold and tells ops", async () => {
    const t = setup();
    await t.events.handle(
      t.at("review.closed", { id: "prv_1", payment_intent: t.intent.id, closed_reason: "refunded_as_fraud" }),
    );
    expect(t.releases).toEqual([]);
    expect(t.notices).toEqual([
      {
        key: "radar-review-closed-prv_1",
        title: "Radar review closed without approval: order stays on hold",
        fields: {
          orderId: t.order.id,
          review: "prv_1",
          closedReason: "refunded_as_fraud",
          action: "Refund and cancel the order from the console",
        },
      },
    ]);
    await t.events.handle(
      t.at("review.closed", { id: "prv_2", payment_intent: t.intent.id, closed_reason: null }),
    );
    expect(defined(t.notices[1]).fields.closedReason).toBe("unknown");
  });

  it("an early fraud warning holds an unshipped order and tells ops", async () => {
    const t = setup();
    const result = await t.events.handle(
      t.at("radar.early_fraud_warning.created", {
        id: "issfr_1",
        charge: t.intent.chargeId,
        fraud_type: "card_never_received",
        actionable: true,
      }),
    );
    expect(result).toEqual({ outcome: "processed", orderId: t.order.id, announced: false });
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "early-fraud-warning",
        detail: { warning: "issfr_1", fraudType: "card_never_received", actionable: true },
        key: "issfr_1",
      },
    ]);
    expect(t.holds).toEqual([[t.order.id, "radar_review", { note: "card_never_received", by: "stripe" }]]);
    expect(t.notices).toEqual([
      {
        key: "early-fraud-warning-issfr_1",
        title: "Early fraud warning: order held",
        fields: {
          orderId: t.order.id,
          warning: "issfr_1",
          fraudType: "card_never_received",
          action: "Refund and cancel the order from the console (a refund heads off the dispute)",
        },
      },
    ]);
  });

  it("an early fraud warning on a shipped order holds nothing", async () => {
    const t = setup({ shipped: true });
    await t.events.handle(
      t.at("radar.early_fraud_warning.created", {
        id: "issfr_1",
        charge: t.intent.chargeId,
        fraud_type: "misc",
        actionable: false,
      }),
    );
    expect(t.holds).toEqual([]);
    expect(defined(t.notices[0]).title).toBe("Early fraud warning");
  });
});
