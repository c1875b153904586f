import { Inngest } from "inngest";
import { AppError } from "../../src/errors";
import { createFulfillOrder } from "../../src/inngest/functions/fulfill-order";
import { chargeCard } from "../../src/inngest/steps/charge-card";
import type { StepContext } from "../../src/inngest/steps/context";
import type { WorkflowSettings } from "../../src/inngest/dependencies";
import { defined } from "../support/defined";
import { defaultSettings, FakeWorkflowWorld } from "../support/fakes/workflow";
import { runFunction, type RunOutcome } from "../support/fakes/step-driver";

/**
 * The fast tier of partial fulfilment (PARTIAL_FULFILMENT): fulfill-order's branch for an order
 * some of whose lines find no stock, on in-memory fakes (test/workflow/partial-fulfilment.test.ts
 * runs the same paths end to end). Each path asserts what Stripe, the stock, the parcel and the
 * customer's e-mail see.
 */

const shipAvailable: WorkflowSettings = { ...defaultSettings, partialFulfilment: "ship_available" };

function setup(settings: WorkflowSettings) {
  const world = new FakeWorkflowWorld();
  const fn = createFulfillOrder(new Inngest({ id: "shop", isDev: true }), world.dependencies(settings));
  const place = (order: { orderId: string; paymentIntentId: string | null }): Promise<RunOutcome> =>
    runFunction(fn, {
      name: "shop/order.placed",
      data: {
        orderId: order.orderId,
        customerId: world.orders.get(order.orderId)?.customerId ?? "cus_gone",
        email: "buyer@example.com",
        total: world.orders.get(order.orderId)?.total ?? 0,
        currency: "eur",
        paymentIntentId: order.paymentIntentId,
        fulfilmentKey: order.orderId,
      },
    });
  return { world, place };
}

const stepIds = (run: RunOutcome) => run.steps.map((step) => step.id);

/** A mug on the shelf and a pin of which only one of the two ordered is left: 4500 in all. */
function orderWithOneLineShort(world: FakeWorkflowWorld, options: { paid?: boolean } = {}) {
  world.addProduct("MUG", 5);
  world.addProduct("PIN", 1);
  return world.addPaidOrder({
    lines: [
      { sku: "MUG", quantity: 1, unitPrice: 2500 },
      { sku: "PIN", quantity: 2, unitPrice: 1000 },
    ],
    ...(options.paid ? { intentState: "succeeded" as const } : {}),
  });
}

describe("fulfill-order (fast tier): partial fulfilment, ship_available", () => {
  it("captures only the reserved lines, e-mails the short line once, and books the parcel with what ships", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world);
    const intentId = defined(order.paymentIntentId);

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(stepIds(run)).toEqual([
      "claim",
      "charge-card",
      "send-short-notice",
      "check-address",
      "send-confirmation",
      "wait-for-delivery",
      "send-review-request",
    ]);
    expect(world.statusesOf(order.orderId)).toEqual(["fulfilling", "shipped", "completed"]);
    expect(world.stockOf("MUG")).toBe(4);
    expect(world.stockOf("PIN")).toBe(0);
    expect(world.reservations.get(order.orderId)?.lines).toEqual([
      { sku: "MUG", quantity: 1 },
      { sku: "PIN", quantity: 1 },
    ]);
    // Stripe is asked for 3500 of the 4500 authorized, once, under the capture key.
    expect(world.stripeCallsOf("capture").map((call) => call.args)).toEqual([
      [intentId, `capture-${order.orderId}`, 3500],
    ]);
    expect(world.intent(intentId)).toMatchObject({
      state: "succeeded",
      amountCaptured: 3500,
      amountRefunded: 0,
    });
    expect(world.stripeCallsOf("refundAmount")).toEqual([]);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({
      status: "captured",
      amountAuthorized: 4500,
      amountCaptured: 3500,
    });
    expect(world.bookedLines.get(order.orderId)).toEqual([
      { sku: "MUG", quantity: 1 },
      { sku: "PIN", quantity: 1 },
    ]);
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      {
        template: "short-lines",
        args: [{ short: [{ sku: "PIN", short: 1, amount: 1000 }], settlement: "not-charged" }],
      },
      { template: "shipped", args: [expect.objectContaining({ trackingNumber: "TRK1" })] },
      { template: "review-request", args: [] },
    ]);
    expect(world.timelineEntry(order.orderId, "lines-short")?.detail).toEqual({
      short: [{ sku: "PIN", requested: 2, short: 1, amount: 1000 }],
      reserved: [
        { sku: "MUG", quantity: 1 },
        { sku: "PIN", quantity: 1 },
      ],
    });
    expect(world.timelineEntry(order.orderId, "short-lines-not-charged")?.detail).toMatchObject({
      settlement: "not-charged",
      amount: 1000,
      captured: 3500,
      total: 4500,
    });
  });

  it("a short line that costs nothing: the whole total captured, and the customer still told which line does not ship", async () => {
    const { world, place } = setup(shipAvailable);
    world.addProduct("MUG", 5);
    world.addProduct("GIFT", 0);
    const order = world.addPaidOrder({
      lines: [
        { sku: "MUG", quantity: 1, unitPrice: 2500 },
        { sku: "GIFT", quantity: 1, unitPrice: 0 },
      ],
    });
    const intentId = defined(order.paymentIntentId);

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(world.stripeCallsOf("capture").map((call) => call.args)).toEqual([
      [intentId, `capture-${order.orderId}`, 2500],
    ]);
    expect(world.emails[0]).toMatchObject({
      template: "short-lines",
      args: [{ short: [{ sku: "GIFT", short: 1, amount: 0 }], settlement: "not-charged" }],
    });
    expect(world.timelineEntry(order.orderId, "short-lines-not-charged")?.detail).toMatchObject({
      amount: 0,
      captured: 2500,
      total: 2500,
    });
  });

  it("refunds the short lines once, by their own key, when the money was taken whole already", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world, { paid: true });
    const intentId = defined(order.paymentIntentId);

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(world.stripeCallsOf("refundAmount").map((call) => call.args)).toEqual([
      [intentId, 1000, `refund-short-${order.orderId}`],
    ]);
    expect(world.intent(intentId)).toMatchObject({ amountCaptured: 4500, amountRefunded: 1000 });
    expect(world.paymentRows.get(order.orderId)).toMatchObject({
      status: "captured",
      amountCaptured: 4500,
      amountRefunded: 1000,
    });
    expect(world.emails[0]).toMatchObject({
      template: "short-lines",
      args: [{ short: [{ sku: "PIN", short: 1, amount: 1000 }], settlement: "refunded" }],
    });
    expect(world.timelineEntry(order.orderId, "short-lines-refunded")?.detail).toMatchObject({
      settlement: "refunded",
      amount: 1000,
      refundId: "re_1",
    });
  });

  it("withholds the short lines' refund of a charged-back payment: Stripe not asked, ops told once per dispute", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world, { paid: true });
    world.disputeHolds.set(order.orderId, {
      amount: 4500,
      disputes: [{ providerId: "dp_short", status: "needs_response", amount: 4500 }],
    });

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(world.stripeCallsOf("refundAmount")).toEqual([]);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({ amountCaptured: 4500, amountRefunded: 0 });
    expect(world.emails[0]).toMatchObject({
      template: "short-lines",
      args: [{ short: [{ sku: "PIN", short: 1, amount: 1000 }], settlement: "withheld" }],
    });
    expect(world.timelineKinds(order.orderId)).not.toContain("short-lines-refunded");
    expect(world.timelineEntry(order.orderId, "short-lines-refund-withheld")?.detail).toMatchObject({
      settlement: "withheld",
      amount: 1000,
      disputes: ["dp_short"],
    });
    expect(world.notices.map((notice) => notice.key)).toEqual(["short-lines-refund-withheld-dp_short"]);
    expect(world.notices[0]?.fields).toMatchObject({ orderId: order.orderId, owed: 1000 });
  });

  it("a dispute holding only part of the charge leaves the short lines refundable", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world, { paid: true });
    // 4500 captured, 3500 held: the 1000 of the short line is outside the dispute.
    world.disputeHolds.set(order.orderId, {
      amount: 3500,
      disputes: [{ providerId: "dp_part", status: "needs_response", amount: 3500 }],
    });

    await place(order);

    expect(world.stripeCallsOf("refundAmount")).toHaveLength(1);
    expect(world.timelineKinds(order.orderId)).toContain("short-lines-refunded");
    expect(world.notices).toEqual([]);
  });

  it("Stripe's charge_disputed (the dispute not yet recorded) withholds too, keyed by the payment", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world, { paid: true });
    const intentId = defined(order.paymentIntentId);
    world.failNext(
      "payments.refundAmount",
      new AppError("charge_disputed", "Stripe refused the refund", {
        details: { paymentIntentId: intentId, disputes: [] },
      }),
    );

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(world.intent(intentId)).toMatchObject({ amountRefunded: 0 });
    expect(world.emails[0]).toMatchObject({ args: [{ settlement: "withheld" }] });
    expect(world.timelineEntry(order.orderId, "short-lines-refund-withheld")?.detail).toMatchObject({
      disputes: [],
    });
    expect(world.notices.map((notice) => notice.key)).toEqual([`short-lines-refund-withheld-${intentId}`]);
  });

  it("puts the short-lines e-mail's outcome on the timeline, once, under the run", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world);

    const run = await place(order);

    const key = `short-lines-${order.orderId}`;
    expect(world.emails.find((email) => email.template === "short-lines")?.key).toBe(key);
    expect(
      world.timelineKinds(order.orderId).filter((kind) => kind === "short-lines-notice-sent"),
    ).toHaveLength(1);
    expect(world.timelineEntry(order.orderId, "short-lines-notice-sent")).toMatchObject({
      detail: { idempotencyKey: key, status: "sent", messageId: `<${key}@shop.test>` },
      runId: run.runId,
    });
  });

  it("refunds nothing more when Stripe shows the short lines refunded already (a retry past the key's memory)", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world, { paid: true });
    const intentId = defined(order.paymentIntentId);
    // An earlier attempt's refund of the short lines, seen by the step's look at Stripe.
    world.failNext("payments.retrieve", () => world.refundPartly(intentId, 1000));

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(world.stripeCallsOf("refundAmount")).toEqual([]);
    expect(world.intent(intentId)).toMatchObject({ amountCaptured: 4500, amountRefunded: 1000 });
    expect(world.paymentRows.get(order.orderId)).toMatchObject({
      status: "captured",
      amountAuthorized: 4500,
      amountCaptured: 4500,
      amountRefunded: 1000,
    });
    expect(world.emails[0]).toMatchObject({
      template: "short-lines",
      args: [{ short: [{ sku: "PIN", short: 1, amount: 1000 }], settlement: "refunded" }],
    });
    expect(world.timelineEntry(order.orderId, "short-lines-refunded")?.detail).toEqual({
      settlement: "refunded",
      amount: 1000,
      refundId: null,
      captured: 4500,
      total: 4500,
      lines: [{ sku: "PIN", requested: 2, short: 1, amount: 1000 }],
    });
  });

  it("a capture retried after a failure asks Stripe for the same amount under the same key, and captures once", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world);
    const intentId = defined(order.paymentIntentId);
    world.failNext("payments.capture", new Error("Stripe answered 500"));

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(run.steps.find((step) => step.id === "charge-card")?.detail).toBe(2);
    expect(world.stripeCallsOf("capture").map((call) => call.args)).toEqual([
      [intentId, `capture-${order.orderId}`, 3500],
    ]);
    expect(world.intent(intentId).amountCaptured).toBe(3500);
    expect(world.emails.filter((email) => email.template === "short-lines")).toHaveLength(1);
  });

  it("a cancel after the partial capture gives back exactly what was captured and releases exactly what was reserved", async () => {
    const { world, place } = setup(shipAvailable);
    const order = orderWithOneLineShort(world);
    const intentId = defined(order.paymentIntentId);
    world.failNext("shipments.bookWithCarrier", () => world.requestCancel(order.orderId));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "cancelled" } });
    expect(world.order(order.orderId).status).toBe("cancelled");
    // Stock: the one mug and the one pin reserved come back; nothing more.
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.stockOf("PIN")).toBe(1);
    // Money: the 3500 captured refunded, not the 4500 authorized.
    expect(world.stripeCallsOf("refundInFull")).toHaveLength(1);
    expect(world.intent(intentId)).toMatchObject({ amountCaptured: 3500, amountRefunded: 3500 });
    expect(world.paymentRows.get(order.orderId)).toMatchObject({
      status: "refunded",
      amountCaptured: 3500,
      amountRefunded: 3500,
    });
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      expect.objectContaining({ template: "short-lines" }),
      { template: "cancelled", args: ["refunded"] },
    ]);
  });

  it("ends the order cancelled_out_of_stock as today when no line has any stock", async () => {
    const { world, place } = setup(shipAvailable);
    world.addProduct("GONE", 0);
    const order = world.addPaidOrder({ lines: [{ sku: "GONE", quantity: 1 }] });

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { outcome: "cancelled_out_of_stock" } });
    expect(world.stripeCallsOf("capture")).toEqual([]);
    expect(world.emails.map(({ template }) => template)).toEqual(["out-of-stock"]);
  });
});

describe("fulfill-order (fast tier): partial fulfilment, cancel_order", () => {
  it("cancels the whole order when one line is short, as without the setting", async () => {
    const { world, place } = setup({ ...defaultSettings, partialFulfilment: "cancel_order" });
    const order = orderWithOneLineShort(world);

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { outcome: "cancelled_out_of_stock" } });
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.stockOf("PIN")).toBe(1);
    expect(world.stripeCallsOf("capture")).toEqual([]);
    expect(world.intent(defined(order.paymentIntentId)).state).toBe("canceled");
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "out-of-stock", args: ["PIN", "voided"] },
    ]);
    expect(world.timelineKinds(order.orderId)).not.toContain("lines-short");
  });
});

describe("charge-card (the step): short lines that leave nothing to charge", () => {
  it("refuses for good, asking Stripe for nothing, when the short lines' price is the whole total", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("PIN", 0);
    const order = world.addPaidOrder({ lines: [{ sku: "PIN", quantity: 2, unitPrice: 1000 }] });
    const ctx: StepContext = {
      step: {
        run: async (_id: string, body: () => Promise<unknown>) => body(),
      } as unknown as StepContext["step"],
      deps: world.dependencies(shipAvailable),
      orderId: order.orderId,
      runId: "run-1",
    };
    const claim = { claimId: "claim-1", paymentIntentId: order.paymentIntentId, lines: [] };
    const short = [{ sku: "PIN", requested: 2, short: 2, amount: 2000 }];

    await expect(chargeCard.invoke(ctx, claim, null, short)).rejects.toThrow(
      `Order ${order.orderId} has nothing left to charge (0)`,
    );
    expect(world.stripeCalls).toEqual([]);
    expect(world.intent(defined(order.paymentIntentId)).state).toBe("requires_capture");
  });
});
