import { defined } from "../../support/defined";
import type Stripe from "stripe";
import type { OpsNotice } from "../../../src/alerts";
import {
  createRefundEvents,
  isRefundEvent,
  refundEventTypes,
} from "../../../src/orders/intake/refund-events";
import type { OrderStatus } from "../../../src/orders/order-repository";
import { FakePublisher, stripeEvent } from "../../support/fakes/intake";
import { MoneyDb, PrismaError } from "../../support/fakes/money-db";
import { MoneyStripe } from "../../support/fakes/money-stripe";
import { captureLog } from "../../support/log-capture";

/**
 * Stripe's refund events (src/orders/intake/refund-events.ts) on an in-memory database and Stripe:
 * the fast tier of the `refunds-disputes-fast` mutation group. test/orders/stripe-webhook.test.ts
 * stays the end-to-end check.
 */

function setup(
  options: {
    status?: OrderStatus;
    captured?: number;
    authorized?: number;
    shipped?: boolean;
    voidLabel?: boolean;
    /** Wire the refund use case's recordLanded (it records what it is handed). */
    landed?: boolean;
  } = {},
) {
  const db = new MoneyDb();
  const stripe = new MoneyStripe();
  const captured = options.captured ?? 5000;
  const order = db.addOrder({ captured, status: options.status ?? "shipped" });
  if (options.shipped ?? false)
    db.insert("shipment", { orderId: order.id, carrier: "ups", trackingNumber: "1Z1" });
  const intent = stripe.addIntent(defined(order.paymentIntentId), {
    captured,
    amount: options.authorized ?? captured,
  });
  const cancels: { orderId: string; from: readonly OrderStatus[] }[] = [];
  const flagged: [string, string][] = [];
  const voided: string[] = [];
  const entries: { orderId: string; kind: string; detail: unknown; key?: string }[] = [];
  const notices: OpsNotice[] = [];
  const publisher = new FakePublisher();
  const log = captureLog();
  const landed: unknown[] = [];
  const orders = {
    markable: true,
    async requestCancellation(orderId: string, from: readonly OrderStatus[]) {
      cancels.push({ orderId, from });
      if (!this.markable) return false;
      defined(defined(db.tables.order).find((row) => row.id === orderId)).cancelRequestedAt = db.now();
      return true;
    },
    async flagForOps(orderId: string, reason: string) {
      flagged.push([orderId, reason]);
    },
  };
  const events = createRefundEvents({
    db: db.asDatabase(),
    stripe: stripe.asStripe(),
    orders: orders as never,
    publisher,
    timeline: {
      record: async (orderId, kind, detail, key) => void entries.push({ orderId, kind, detail, key }),
    },
    alerts: { notify: async (notice) => void notices.push(notice) },
    logger: log.logger,
    ...(options.voidLabel
      ? {
          voidLabel: async (orderId: string) => {
            voided.push(orderId);
            return "voided";
          },
        }
      : {}),
    ...(options.landed
      ? {
          refunds: {
            recordLanded: async (refund: unknown) => {
              landed.push(refund);
              return true;
            },
          },
        }
      : {}),
  });
  const charge = (paymentIntent: unknown = intent.id) =>
    stripeEvent("charge.refunded", { id: intent.chargeId, object: "charge", payment_intent: paymentIntent });
  const messages = () => log.lines().map((line) => line.msg);
  const rows = () => defined(db.tables.refund).filter((row) => row.orderId === order.id);
  const payment = () => defined(defined(db.tables.payment).find((row) => row.orderId === order.id));
  return {
    db,
    stripe,
    intent,
    order,
    orders,
    cancels,
    flagged,
    voided,
    landed,
    entries,
    notices,
    publisher,
    events,
    charge,
    messages,
    rows,
    payment,
  };
}

describe("refund events (in-memory database and Stripe)", () => {
  it("names the events it handles", () => {
    expect(refundEventTypes).toEqual([
      "charge.refunded",
      "refund.created",
      "refund.updated",
      "refund.failed",
    ]);
    for (const type of refundEventTypes) expect(isRefundEvent(stripeEvent(type, {}))).toBe(true);
    expect(isRefundEvent(stripeEvent("charge.succeeded", {}))).toBe(false);
  });

  it("an event naming no payment is ignored without reading anything", async () => {
    const t = setup();
    await expect(
      t.events.handle(stripeEvent("refund.created", { id: "re_1", payment_intent: null })),
    ).resolves.toEqual({
      outcome: "ignored",
      announced: false,
    });
    await expect(t.events.handle(stripeEvent("refund.created", { id: "re_1" }))).resolves.toMatchObject({
      outcome: "ignored",
    });
    expect(t.db.calls).toEqual([]);
  });

  it("a payment of no order of ours is answered unknown-order and logged", async () => {
    const t = setup();
    const result = await t.events.handle(t.charge("pi_elsewhere"));
    expect(result).toEqual({ outcome: "unknown-order", announced: false });
    expect(t.messages()).toContain("refund for an order we do not know");
    expect(t.rows()).toEqual([]);
  });

  it("a Dashboard refund gets its row, its timeline entry and the payment's total, once", async () => {
    const t = setup();
    const refund = t.stripe.dashboardRefund(t.intent.id, 1000);
    const event = t.charge();
    const result = await t.events.handle(event);
    expect(result).toEqual({ outcome: "processed", orderId: t.order.id, announced: false });
    expect(t.rows()).toEqual([
      expect.objectContaining({
        orderId: t.order.id,
        amount: 1000,
        currency: "usd",
        reason: "refunded at Stripe",
        status: "succeeded",
        providerId: refund.id,
      }),
    ]);
    expect(t.entries).toEqual([
      {
        orderId: t.order.id,
        kind: "refund-recorded",
        detail: {
          refundId: refund.id,
          amount: 1000,
          currency: "usd",
          status: "succeeded",
          stripeEvent: event.id,
        },
        key: undefined,
      },
    ]);
    expect(t.payment()).toMatchObject({ amountRefunded: 1000, status: "captured" });
    expect(t.cancels).toEqual([]);

    // Another event of the same refund: nothing new.
    await expect(t.events.handle(t.charge())).resolves.toEqual({
      outcome: "duplicate",
      orderId: t.order.id,
      announced: false,
    });
    expect(t.rows()).toHaveLength(1);
    expect(t.entries).toHaveLength(1);
  });

  it("finds the order by its payment's Stripe id, and reads an expanded payment intent", async () => {
    const t = setup();
    defined(defined(t.db.tables.order)[0]).paymentIntentId = null;
    t.stripe.dashboardRefund(t.intent.id, 700);
    const result = await t.events.handle(t.charge({ id: t.intent.id }));
    expect(result).toMatchObject({ outcome: "processed", orderId: t.order.id });
    expect(t.rows()[0]).toMatchObject({ amount: 700 });
  });

  it("keeps Stripe's reason, maps its statuses and follows a refund through its states", async () => {
    const t = setup();
    const refund = t.stripe.dashboardRefund(t.intent.id, 500, "pending");
    refund.reason = "requested_by_customer";
    await t.events.handle(stripeEvent("refund.created", refund));
    expect(t.rows()[0]).toMatchObject({ status: "pending", reason: "requested_by_customer" });
    expect(t.payment().amountRefunded).toBe(500);

    refund.status = "succeeded";
    await expect(t.events.handle(stripeEvent("refund.updated", refund))).resolves.toMatchObject({
      outcome: "duplicate",
    });
    expect(t.rows()).toEqual([expect.objectContaining({ status: "succeeded" })]);
    expect(t.entries).toHaveLength(1);

    for (const status of ["failed", "canceled"] as const) {
      refund.status = status;
      await t.events.handle(stripeEvent("refund.failed", refund));
      expect(defined(t.rows()[0]).status).toBe("failed");
      refund.status = "requires_action";
      await t.events.handle(stripeEvent("refund.updated", refund));
      expect(defined(t.rows()[0]).status).toBe("pending");
    }
  });

  it("a refund this service asked for settles its own row, not a second one", async () => {
    const t = setup();
    const ours = t.db.insert("refund", { orderId: t.order.id, amount: 1200, currency: "usd" });
    const refund = t.stripe.dashboardRefund(t.intent.id, 1200);
    refund.metadata = { refundRequestId: ours.id as string };
    await expect(t.events.handle(t.charge())).resolves.toMatchObject({ outcome: "duplicate" });
    expect(t.rows()).toEqual([
      expect.objectContaining({ id: ours.id, status: "succeeded", providerId: refund.id }),
    ]);
    expect(t.entries).toEqual([]);
    expect(t.payment().amountRefunded).toBe(1200);
  });

  it("a succeeded refund this service asked for is handed to the refund use case to record, with its asker and Stripe's total", async () => {
    const t = setup({ landed: true });
    const ours = t.db.insert("refund", { orderId: t.order.id, amount: 1200, currency: "usd" });
    const refund = t.stripe.dashboardRefund(t.intent.id, 1200);
    refund.metadata = { refundRequestId: ours.id as string, requestedBy: "admin-api" };
    const dashboard = t.stripe.dashboardRefund(t.intent.id, 300);
    await t.events.handle(t.charge());
    expect(t.landed).toEqual([
      { orderId: t.order.id, requestId: ours.id, providerId: refund.id, by: "admin-api", atStripe: 1500 },
    ]);
    // The Dashboard's refund is not ours: it gets its own row, as before.
    expect(t.rows()).toEqual(
      expect.arrayContaining([expect.objectContaining({ providerId: dashboard.id, amount: 300 })]),
    );
  });

  it("a refund of ours Stripe has not settled, or one without our request id, is not handed over", async () => {
    const t = setup({ landed: true });
    const ours = t.db.insert("refund", { orderId: t.order.id, amount: 1200, currency: "usd" });
    const refund = t.stripe.dashboardRefund(t.intent.id, 1200, "pending");
    refund.metadata = { refundRequestId: ours.id as string };
    t.stripe.dashboardRefund(t.intent.id, 300);
    await t.events.handle(t.charge());
    expect(t.landed).toEqual([]);
    expect(defined(t.rows().find((row) => row.id === ours.id))).toMatchObject({
      status: "pending",
      providerId: refund.id,
    });
  });

  it("a request id naming another order's row is not taken: the refund gets a row of its own", async () => {
    const t = setup();
    const other = t.db.addOrder({});
    const theirs = t.db.insert("refund", { orderId: other.id, amount: 1200, currency: "usd" });
    const refund = t.stripe.dashboardRefund(t.intent.id, 1200);
    refund.metadata = { refundRequestId: theirs.id as string };
    await t.events.handle(t.charge());
    expect(defined(t.db.tables.refund).find((row) => row.id === theirs.id)).toMatchObject({
      status: "pending",
      providerId: null,
    });
    expect(t.rows()).toEqual([expect.objectContaining({ providerId: refund.id, amount: 1200 })]);
  });

  it("two deliveries recording one refund at once keep one row; another database error fails the delivery", async () => {
    const t = setup();
    t.stripe.dashboardRefund(t.intent.id, 800);
    const create = t.db.refund.create;
    t.db.refund.create = async (args) => {
      t.db.insert("refund", { ...args.data });
      return create(args);
    };
    await expect(t.events.handle(t.charge())).resolves.toMatchObject({ outcome: "duplicate" });
    expect(t.rows()).toHaveLength(1);
    expect(t.entries).toEqual([]);

    const broken = setup();
    broken.stripe.dashboardRefund(broken.intent.id, 800);
    broken.db.refund.create = async () => {
      throw new PrismaError("P1001", "Can't reach database server");
    };
    await expect(broken.events.handle(broken.charge())).rejects.toThrow("Can't reach database server");
  });

  it("refunded in full before the label: the fulfilment is stopped once, through the cancel path", async () => {
    const t = setup({ status: "paid" });
    t.stripe.dashboardRefund(t.intent.id, 5000);
    const result = await t.events.handle(t.charge());
    expect(result).toEqual({ outcome: "processed", orderId: t.order.id, announced: false });
    expect(t.payment()).toMatchObject({ amountRefunded: 5000, status: "refunded" });
    expect(t.cancels).toEqual([{ orderId: t.order.id, from: ["authorized", "paid", "fulfilling"] }]);
    expect(t.publisher.accepted).toHaveLength(1);
    expect(t.publisher.accepted[0]).toMatchObject({
      data: { orderId: t.order.id, reason: "refunded in full at Stripe" },
    });
    expect(t.entries.find((e) => e.kind === "cancel-requested")).toMatchObject({
      detail: { reason: "refunded in full at Stripe", by: "stripe" },
    });
    expect(t.messages()).toContain("refunded in full before shipping: stopped");

    await expect(t.events.handle(t.charge())).resolves.toEqual({
      outcome: "duplicate",
      orderId: t.order.id,
      announced: false,
    });
    expect(t.cancels).toHaveLength(1);
  });

  it("an order that moved on before the stop is not announced", async () => {
    const t = setup({ status: "fulfilling" });
    t.orders.markable = false;
    t.stripe.dashboardRefund(t.intent.id, 5000);
    await expect(t.events.handle(t.charge())).resolves.toMatchObject({ outcome: "processed" });
    expect(t.cancels).toHaveLength(1);
    expect(t.publisher.accepted).toEqual([]);
  });

  it("an order already ended, or not yet stoppable, is not stopped", async () => {
    for (const status of [
      "cancelled",
      "cancelled_out_of_stock",
      "payment_failed",
      "expired",
      "pending",
      "delivered",
    ] as const) {
      const t = setup({ status, voidLabel: true });
      t.stripe.dashboardRefund(t.intent.id, 5000);
      await expect(t.events.handle(t.charge())).resolves.toMatchObject({ outcome: "processed" });
      expect(t.cancels).toEqual([]);
      expect(t.voided).toEqual([]);
      expect(t.notices).toEqual([]);
    }
  });

  it("refunded in full after the label: the label is handed back, once", async () => {
    for (const status of ["fulfilling", "shipped"] as const) {
      const t = setup({ status, shipped: true, voidLabel: true });
      t.stripe.dashboardRefund(t.intent.id, 5000);
      await t.events.handle(t.charge());
      expect(t.voided).toEqual([t.order.id]);
      expect(t.cancels).toEqual([]);
      expect(t.messages()).toContain("refunded in full after the label: voided");
      await t.events.handle(t.charge());
      expect(t.voided).toHaveLength(1);
    }
  });

  it("refunded in full after the label with no carrier to void it: ops are flagged and told, once", async () => {
    for (const status of ["fulfilling", "shipped"] as const) {
      const t = setup({ status, shipped: true });
      t.stripe.dashboardRefund(t.intent.id, 5000);
      const event = t.charge();
      await t.events.handle(event);
      expect(t.flagged).toEqual([[t.order.id, "refunded in full at Stripe after the label was bought"]]);
      expect(t.entries.filter((e) => e.kind === "refund-needs-ops")).toEqual([
        {
          orderId: t.order.id,
          kind: "refund-needs-ops",
          detail: { refunded: 5000, stripeEvent: event.id },
          key: undefined,
        },
      ]);
      expect(t.notices).toEqual([
        {
          key: `refunded-after-label-${t.order.id}`,
          title: "Order refunded in full after its label was bought",
          fields: {
            orderId: t.order.id,
            refunded: 5000,
            currency: "usd",
            action: "Stop the parcel with the carrier (void the label if it has not moved)",
          },
        },
      ]);
      await t.events.handle(t.charge());
      expect(t.notices).toHaveLength(1);
    }
  });

  it("a delivered order's label is not handed back", async () => {
    const t = setup({ status: "delivered", shipped: true, voidLabel: true });
    t.stripe.dashboardRefund(t.intent.id, 5000);
    await t.events.handle(t.charge());
    expect(t.voided).toEqual([]);
  });

  it("a booked order in another state is left to its own path", async () => {
    const t = setup({ status: "delivered", shipped: true });
    t.stripe.dashboardRefund(t.intent.id, 5000);
    await t.events.handle(t.charge());
    expect(t.flagged).toEqual([]);
    expect(t.notices).toEqual([]);
  });

  it("a partial capture's released remainder is not a refund; a refund of all captured is full", async () => {
    const t = setup({ status: "paid", captured: 5000, authorized: 7500 });
    t.stripe.dashboardRefund(t.intent.id, 4999);
    await t.events.handle(t.charge());
    expect(t.payment()).toMatchObject({ amountRefunded: 4999, status: "captured" });
    expect(t.cancels).toEqual([]);
    t.stripe.dashboardRefund(t.intent.id, 1);
    await t.events.handle(t.charge());
    expect(t.payment()).toMatchObject({ amountRefunded: 5000, status: "refunded" });
    expect(t.cancels).toHaveLength(1);
  });

  it("nothing captured: the payment is not touched and nothing is stopped", async () => {
    const t = setup({ status: "paid", captured: 0, authorized: 5000 });
    t.intent.refunds.push({
      id: "re_void",
      amount: 0,
      status: "succeeded",
      currency: "usd",
      metadata: {},
    } as never);
    const result = await t.events.handle(t.charge());
    expect(result).toMatchObject({ outcome: "processed" });
    expect(t.db.calls).not.toContain("payment.updateMany");
    expect(t.cancels).toEqual([]);
  });

  it("a charge Stripe answers unexpanded counts as nothing captured", async () => {
    const t = setup({ status: "paid" });
    t.stripe.dashboardRefund(t.intent.id, 5000);
    const retrieve = t.stripe.client.paymentIntents.retrieve;
    t.stripe.client.paymentIntents.retrieve = async (id: string) =>
      ({ ...(await retrieve(id)), latest_charge: "ch_x" }) as never;
    await t.events.handle(t.charge());
    expect(t.payment().amountRefunded).toBe(0);
    expect(t.cancels).toEqual([]);
  });
});

export type { Stripe };
