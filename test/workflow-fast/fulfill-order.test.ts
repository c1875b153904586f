import { Inngest, StepError, type InngestFunction } from "inngest";
import { compileExpression } from "../../src/dev/inngest-engine/expressions";
import { claimIdOf } from "../../src/inngest/steps/claim-order";
import { createFulfillOrder } from "../../src/inngest/functions/fulfill-order";
import type { WorkflowSettings } from "../../src/inngest/dependencies";
import { defined } from "../support/defined";
import { declined, defaultSettings, FakeWorkflowWorld } from "../support/fakes/workflow";
import { runFunction, type DriverOptions, type RunOutcome } from "../support/fakes/step-driver";

/**
 * The fast tier of fulfill-order: the function's handler and its steps (src/inngest/steps) run
 * in-process against in-memory fakes of their ports, no database, engine or HTTP (test/workflow
 * covers the same paths end to end). Each path asserts what the customer, Stripe, the stock and
 * ops see.
 */

// reserve-stock runs inside claim, create-shipment inside check-address (decision 0195).
const happySteps = [
  "claim",
  "charge-card",
  "check-address",
  "send-confirmation",
  "wait-for-delivery",
  "mark-delivered",
  "wait-after-delivery",
  "send-review-request",
];

function setup(settings: WorkflowSettings = defaultSettings) {
  const world = new FakeWorkflowWorld();
  const fn = createFulfillOrder(new Inngest({ id: "shop", isDev: true }), world.dependencies(settings));
  const place = (
    order: { orderId: string; paymentIntentId: string | null },
    options: DriverOptions & { eventIntentId?: string | null } = {},
  ): Promise<RunOutcome> =>
    runFunction(
      fn,
      {
        name: "shop/order.placed",
        data: {
          orderId: order.orderId,
          customerId: world.orders.get(order.orderId)?.customerId ?? "cus_gone",
          email: "buyer@example.com",
          total: 5000,
          currency: "eur",
          paymentIntentId:
            options.eventIntentId === undefined ? order.paymentIntentId : options.eventIntentId,
          fulfilmentKey: order.orderId,
        },
      },
      options,
    );
  return { world, place };
}

const delivered = (orderId: string) => ({
  "wait-for-delivery": {
    name: "shop/shipment.delivered",
    data: { orderId, trackingNumber: "TRK1", deliveredAt: "2026-12-01T10:00:00.000Z" },
  },
});

const stepIds = (run: RunOutcome) => run.steps.map((step) => step.id);

function failed(run: RunOutcome): Error {
  if (run.status !== "failed") throw new Error(`expected the run to fail, it ${run.status}`);
  return run.error;
}

/** What the SDK registers with Inngest for the function (the sync payload). */
function registeredConfig(fn: InngestFunction.Any) {
  const internals = fn as unknown as {
    getConfig(options: { baseUrl: URL; appPrefix: string }): Record<string, unknown>[];
  };
  return internals.getConfig({ baseUrl: new URL("http://localhost:3000/api/inngest"), appPrefix: "shop" });
}

describe("fulfill-order (fast tier): what Inngest is told", () => {
  // Built inside each test, not once for the describe block: a mutant is active only while a test runs.
  const configs = () => {
    const settings = { ...defaultSettings, cancelWindow: "2h" };
    const world = new FakeWorkflowWorld();
    return registeredConfig(
      createFulfillOrder(new Inngest({ id: "shop", isDev: true }), world.dependencies(settings)),
    );
  };
  const placed = {
    data: { orderId: "order-1", customerId: "cus_1", fulfilmentKey: "order-1/redrive-2" },
  };

  it("runs on shop/order.placed, retries 5 times and has an onFailure handler", () => {
    const [config, failureHandler] = configs();
    expect(config).toMatchObject({
      id: "shop-fulfill-order",
      name: "Fulfil a paid order",
      triggers: [{ event: "shop/order.placed" }],
      steps: { step: { retries: { attempts: 5 } } },
    });
    expect(failureHandler).toMatchObject({ id: "shop-fulfill-order-failure" });
  });

  it("runs once per fulfilment key, and one step at a time per customer", () => {
    const [config] = configs();
    const idempotency = compileExpression(String(config?.idempotency));
    expect(idempotency.key({ event: placed })).toBe("order-1/redrive-2");
    expect(config?.concurrency).toEqual([{ limit: 1, key: "event.data.customerId" }]);
    const [concurrency] = config?.concurrency as { key: string }[];
    expect(compileExpression(String(concurrency?.key)).key({ event: placed })).toBe("cus_1");
  });

  it("is cancelled by this order's shop/order.cancelled within CANCEL_WINDOW, not another order's", () => {
    const [config] = configs();
    expect(config?.cancel).toEqual([
      {
        event: "shop/order.cancelled",
        timeout: "2h",
        if: "async.data.orderId == event.data.orderId",
      },
    ]);
    const [cancel] = config?.cancel as { if: string }[];
    const cancels = compileExpression(String(cancel?.if));
    expect(cancels.matches({ event: placed, async: { data: { orderId: "order-1" } } })).toBe(true);
    expect(cancels.matches({ event: placed, async: { data: { orderId: "order-2" } } })).toBe(false);
  });
});

describe("fulfill-order (fast tier): the happy path", () => {
  it("a delivery the carrier webhook marked (`orderMarked`) costs no mark-delivered step", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const { orderId } = order;
    const event = delivered(orderId)["wait-for-delivery"];

    const run = await place(order, {
      events: { "wait-for-delivery": { ...event, data: { ...event.data, orderMarked: true } } },
    });

    expect(run.status).toBe("completed");
    expect(stepIds(run)).toEqual(happySteps.filter((id) => id !== "mark-delivered"));
    // The webhook moved the order (test/shipping/carrier-webhook.test.ts); the run did not.
    expect(world.statusesOf(orderId)).toEqual(["fulfilling", "shipped", "completed"]);
  });

  it("runs begun before the folds (decision 0195) replay their own steps: reserve-stock, create-shipment", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }], status: "fulfilling" });
    const { orderId } = order;
    world.order(orderId).claimId = "run-run-1";

    // Memoised by the older shape: a claim without `reservation`, a check-address without `shipment`.
    const run = await place(order, {
      events: delivered(orderId),
      memoised: {
        claim: {
          claimed: true,
          claimId: "run-run-1",
          lines: [{ sku: "MUG", quantity: 2 }],
          paymentIntentId: order.paymentIntentId,
        },
      },
    });
    expect(run.status).toBe("completed");
    expect(stepIds(run)).toEqual(["reserve-stock", ...happySteps.slice(1)]);
    expect(world.stockOf("MUG")).toBe(3);

    const older = setup();
    older.world.addProduct("MUG", 5);
    const second = older.world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const rerun = await older.place(second, {
      events: delivered(second.orderId),
      memoised: { "check-address": { deliverable: true, hold: null } },
    });
    expect(rerun.status).toBe("completed");
    expect(stepIds(rerun)).toEqual([
      "claim",
      "charge-card",
      "create-shipment",
      ...happySteps.slice(happySteps.indexOf("send-confirmation")),
    ]);
    expect(older.world.carrierBookings.size).toBe(1);
  });

  it("claims, reserves, captures once, books, e-mails the tracking link, marks delivery and asks for a review", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }] });
    const { orderId } = order;

    const run = await place(order, { events: delivered(orderId) });

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId, paymentId: expect.stringMatching(/^pay_/), trackingNumber: "TRK1" },
    });
    expect(stepIds(run)).toEqual(happySteps);
    expect(world.statusesOf(orderId)).toEqual(["fulfilling", "shipped", "delivered", "completed"]);
    expect(world.stockOf("MUG")).toBe(3);
    expect(world.stripeCallsOf("capture")).toEqual([
      { method: "capture", args: [order.paymentIntentId, `capture-${orderId}`] },
    ]);
    expect(world.paymentRows.get(orderId)).toMatchObject({ status: "captured", amountCaptured: 5000 });
    expect(world.shipmentRows.get(orderId)).toMatchObject({
      trackingNumber: "TRK1",
      labelUrl: expect.any(String),
    });
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      {
        template: "shipped",
        args: [{ carrier: "FakePost", trackingNumber: "TRK1", trackingUrl: "https://track.example/TRK1" }],
      },
      { template: "review-request", args: [] },
    ]);
    expect(world.timelineKinds(orderId)).toEqual([
      "claimed",
      "stock-reserved",
      "payment-captured",
      "shipment-booked",
      "confirmation-sent",
      "delivered",
      "review-requested",
    ]);
    const claimId = world.order(orderId).claimId;
    expect(world.timelineEntry(orderId, "claimed")?.detail).toEqual({ claimId });
    expect(world.timelineEntry(orderId, "stock-reserved")?.detail).toEqual({
      ok: true,
      reserved: [{ sku: "MUG", quantity: 2 }],
    });
    expect(world.timelineEntry(orderId, "confirmation-sent")?.detail).toEqual({
      idempotencyKey: `shipped-${orderId}`,
      status: "sent",
      messageId: `<shipped-${orderId}@shop.test>`,
    });
    expect(world.timelineEntry(orderId, "delivered")?.detail).toEqual({
      deliveredAt: "2026-12-01T10:00:00.000Z",
    });
    expect(world.timelineEntry(orderId, "review-requested")?.detail).toMatchObject({
      idempotencyKey: `review-${orderId}`,
      afterDelivery: true,
    });
    // Every entry is the run's own, so a retried step records nothing twice.
    expect(world.timelineEntries.every((entry) => entry.runId === run.runId)).toBe(true);
    expect(world.runFailures).toEqual([]);
    expect(world.notices).toEqual([]);
  });

  it("waits for this order's delivery event up to REVIEW_DELAY, then REVIEW_AFTER_DELIVERY more", async () => {
    const { world, place } = setup({
      ...defaultSettings,
      cancelWindow: "1h",
      reviewDelay: "9d",
      reviewAfterDelivery: "2d",
    });
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    const run = await place(order, { events: delivered(order.orderId) });

    expect(run.steps.find((step) => step.id === "wait-for-delivery")?.detail).toEqual({
      event: "shop/shipment.delivered",
      timeout: "9d",
      if: "async.data.orderId == event.data.orderId",
    });
    expect(run.steps.find((step) => step.id === "wait-after-delivery")?.detail).toBe("2d");
  });

  it("asks for a review after REVIEW_DELAY when no delivery event comes, from `shipped`", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(stepIds(run)).toEqual([
      "claim",
      "charge-card",
      "check-address",
      "send-confirmation",
      "wait-for-delivery",
      "send-review-request",
    ]);
    expect(world.statusesOf(order.orderId)).toEqual(["fulfilling", "shipped", "completed"]);
    expect(world.timelineKinds(order.orderId)).not.toContain("delivered");
    expect(world.timelineEntry(order.orderId, "review-requested")?.detail).toMatchObject({
      afterDelivery: false,
    });
  });

  it("does not take another order's delivery event for this one's", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const other = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    const run = await place(order, { events: delivered(other.orderId) });

    expect(stepIds(run)).not.toContain("mark-delivered");
    expect(world.timelineEntry(order.orderId, "review-requested")?.detail).toMatchObject({
      afterDelivery: false,
    });
  });

  it("digital-only: books nothing, sends no tracking e-mail, waits REVIEW_AFTER_DELIVERY and asks for a review", async () => {
    const { world, place } = setup();
    world.addProduct("EBOOK", 100, { digital: true });
    const order = world.addPaidOrder({ lines: [{ sku: "EBOOK", quantity: 1 }] });

    const run = await place(order, { events: delivered(order.orderId) });

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, trackingNumber: null },
    });
    expect(
      run.steps.map(({ id, detail }) => (id === "wait-after-delivery" ? `${id}:${String(detail)}` : id)),
    ).toEqual(["claim", "charge-card", "check-address", "wait-after-delivery:3d", "send-review-request"]);
    expect(world.carrierBookings.size).toBe(0);
    expect(world.shipmentRows.size).toBe(0);
    expect(world.emailsTo(order.orderId)).toEqual(["review-request"]);
    expect(world.timelineKinds(order.orderId)).toContain("nothing-to-ship");
    expect(world.timelineEntry(order.orderId, "review-requested")?.detail).toMatchObject({
      afterDelivery: true,
    });
    expect(world.order(order.orderId).status).toBe("completed");
  });

  it("captures the PaymentIntent the event names, else the order's", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    const run = await place(order, { eventIntentId: null });

    expect(run.status).toBe("completed");
    expect(world.stripeCallsOf("capture")[0]?.args[0]).toBe(order.paymentIntentId);
  });

  it("records an already captured payment (automatic capture) without capturing again", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], intentState: "succeeded" });

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(world.timelineEntry(order.orderId, "payment-captured")?.detail).toEqual({
      paymentIntentId: order.paymentIntentId,
      amountCaptured: 2500,
      currency: "eur",
      alreadyCaptured: true,
    });
  });
});

describe("fulfill-order (fast tier): the claim", () => {
  it("fails the run without retrying when the order does not exist, and alerts ops with the order and customer", async () => {
    const { world, place } = setup();
    const orderId = "00000000-0000-4000-8000-000000000001";

    const run = await place({ orderId, paymentIntentId: "pi_gone" });

    const error = failed(run);
    expect(error.name).toBe("NonRetriableError");
    expect(error.message).toBe(`Order ${orderId} does not exist`);
    expect(world.timelineEntries).toEqual([]);
    expect(world.runFailures).toEqual([
      {
        functionId: "shop-fulfill-order",
        runId: run.runId,
        orderId,
        customerId: "cus_gone",
        error: { name: "NonRetriableError", message: `Order ${orderId} does not exist` },
      },
    ]);
  });

  it("cancelled before the run started: voids the authorization, ends the order cancelled and tells the customer once", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.requestCancel(order.orderId);

    const run = await place(order);

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, skipped: "cancelled-before-start" },
    });
    expect(world.order(order.orderId).status).toBe("cancelled");
    expect(world.intent(defined(order.paymentIntentId)).state).toBe("canceled");
    expect(world.stripeCallsOf("voidAuthorization")[0]?.args).toEqual([
      order.paymentIntentId,
      `void-${order.orderId}`,
    ]);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({ status: "voided", amountAuthorized: 2500 });
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "cancelled", args: ["voided"] },
    ]);
    expect(world.timelineEntry(order.orderId, "claim-lost")?.detail).toEqual({ reason: "cancel-requested" });
    expect(world.timelineEntry(order.orderId, "cancelled")?.detail).toEqual({
      status: "cancelled",
      reason: "cancelled before fulfilment started",
      settlement: "voided",
    });
    expect(stepIds(run)).not.toContain("check-claim");
    expect(world.runFailures).toEqual([]);
  });

  it("cancelled before the run started: gives back the stock the checkout held, as well as the payment", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }], held: true });
    expect(world.stockOf("MUG")).toBe(3);
    world.requestCancel(order.orderId);

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { skipped: "cancelled-before-start" } });
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.holds.get(order.orderId)?.status).toBe("released");
    expect(world.intent(defined(order.paymentIntentId)).state).toBe("canceled");
    expect(world.timelineEntry(order.orderId, "stock-released")).toMatchObject({
      detail: { released: [{ sku: "MUG", quantity: 2 }] },
      runId: run.runId,
    });
    // Stock first, then money, as every compensation runs them (newest side effect first).
    expect(stepIds(run)).toEqual([
      "claim",
      "lift-hold",
      "release-stock",
      "return-payment",
      "mark-cancelled",
      "send-cancelled",
    ]);
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "cancelled", args: ["voided"] },
    ]);
  });

  it("converts the checkout's hold into the reservation, taking no stock twice", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }], held: true });

    const run = await place(order, { events: delivered(order.orderId) });

    expect(run.status).toBe("completed");
    expect(world.stockOf("MUG")).toBe(3);
    expect(world.holds.get(order.orderId)?.status).toBe("converted");
    expect(world.reservations.get(order.orderId)?.status).toBe("reserved");
    // The conversion's statement wrote the run's entry: the step wrote none of its own.
    expect(world.timelineEntry(order.orderId, "stock-reserved")).toMatchObject({
      detail: { ok: true, reserved: [{ sku: "MUG", quantity: 2 }] },
      runId: run.runId,
    });
    expect(world.timelineWrites.map((write) => write.kind)).not.toContain("stock-reserved");
  });

  it("claims with one statement, which writes the `claimed` entry and returns the order's lines", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }] });

    const run = await place(order, { events: delivered(order.orderId) });

    expect(run.status).toBe("completed");
    expect(world.timelineEntries.filter((entry) => entry.kind === "claimed")).toMatchObject([
      { detail: { claimId: world.order(order.orderId).claimId }, runId: run.runId },
    ]);
    expect(world.timelineWrites.map((write) => write.kind)).not.toContain("claimed");
    expect(world.bookedLines.get(order.orderId)).toEqual([{ sku: "MUG", quantity: 2 }]);
  });

  it("a claim retried after its statement landed finds its own claim, reads the order and records `claimed` once", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    world.addProduct("PIN", 5);
    const order = world.addPaidOrder({
      lines: [
        { sku: "PIN", quantity: 1 },
        { sku: "MUG", quantity: 2 },
      ],
      status: "fulfilling",
    });
    // The claim id comes from the run id: no step draws it.
    world.order(order.orderId).claimId = claimIdOf("run-1");

    const run = await place(order, { events: delivered(order.orderId), runId: "run-1" });

    expect(run.status).toBe("completed");
    expect(stepIds(run)).toEqual(happySteps);
    expect(world.timelineEntries.filter((entry) => entry.kind === "claimed")).toMatchObject([
      { detail: { claimId: "run-run-1" }, runId: "run-1" },
    ]);
    expect(world.timelineWrites.filter((write) => write.kind === "claimed")).toHaveLength(1);
    expect(world.bookedLines.get(order.orderId)).toEqual([
      { sku: "MUG", quantity: 2 },
      { sku: "PIN", quantity: 1 },
    ]);
    expect(world.stockOf("MUG")).toBe(3);
    expect(world.stockOf("PIN")).toBe(4);
  });

  it("a run memoised by the older step shape (`claim-id`), whose claim landed unrecorded, finds its claim by its entry", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }], status: "fulfilling" });
    // Its claim statement took the order under the random id `claim-id` drew, and wrote its entry.
    world.order(order.orderId).claimId = "claim-of-this-run";
    world.timelineEntries.push({
      orderId: order.orderId,
      kind: "claimed",
      detail: { claimId: "claim-of-this-run" },
      runId: "run-old",
      at: new Date(),
    });

    const run = await place(order, {
      events: delivered(order.orderId),
      runId: "run-old",
      memoised: { "claim-id": "claim-of-this-run" },
    });

    expect(run.status).toBe("completed");
    expect(stepIds(run)).toEqual(happySteps);
    expect(world.order(order.orderId).claimId).toBe("claim-of-this-run");
    expect(world.timelineEntries.filter((entry) => entry.kind === "claim-lost")).toEqual([]);
    expect(world.stockOf("MUG")).toBe(3);
    expect(world.stripeCallsOf("capture")).toHaveLength(1);
  });

  it("leaves an order claimed by another run alone", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "fulfilling" });
    world.redriveTo(order.orderId, "someone-else");

    const run = await place(order);

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, skipped: "claimed-by-another-run" },
    });
    expect(stepIds(run)).toEqual(["claim"]);
    expect(world.stripeCalls).toEqual([]);
    expect(world.emails).toEqual([]);
    expect(world.order(order.orderId)).toMatchObject({ status: "fulfilling", claimId: "someone-else" });
    expect(world.timelineEntry(order.orderId, "claim-lost")?.detail).toEqual({
      reason: "claimed-by-another-run",
    });
  });

  it("leaves an order that cannot be paid alone", async () => {
    const { world, place } = setup();
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "payment_failed" });

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { skipped: "not-payable" } });
    expect(world.order(order.orderId).status).toBe("payment_failed");
  });

  it("retries the claim while the payment is not recorded yet, and keeps one claim id across the retries", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "payment_processing" });
    world.failNext("orders.claim", () => undefined);
    world.failNext("orders.claim", () => {
      world.order(order.orderId).status = "authorized";
    });

    const run = await place(order);

    expect(run.status).toBe("completed");
    expect(run.steps.find((step) => step.id === "claim")?.detail).toBe(2);
    expect(world.order(order.orderId).claimId).toEqual(
      world.timelineEntry(order.orderId, "claimed")?.detail.claimId,
    );
    expect(world.timelineKinds(order.orderId)).not.toContain("claim-lost");
  });

  it("fails the run, and alerts, when the payment never gets recorded", async () => {
    const { world, place } = setup();
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "pending" });

    const run = await place(order);

    expect(failed(run).name).toBe("OrderNotPaidYetError");
    expect(failed(run).message).toContain("is not paid yet");
    expect(run.steps.find((step) => step.id === "claim")?.detail).toBe(6);
    expect(world.runFailures).toHaveLength(1);
  });
});

describe("fulfill-order (fast tier): out of stock", () => {
  it("voids the authorization, takes no stock, ends the order cancelled_out_of_stock and e-mails once", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    world.addProduct("RARE", 1);
    const order = world.addPaidOrder({
      lines: [
        { sku: "MUG", quantity: 1 },
        { sku: "RARE", quantity: 2 },
      ],
    });

    const run = await place(order);

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, outcome: "cancelled_out_of_stock" },
    });
    expect(stepIds(run)).toEqual([
      "claim",
      "check-claim",
      "return-payment",
      "mark-out-of-stock",
      "send-out-of-stock",
    ]);
    expect(world.order(order.orderId).status).toBe("cancelled_out_of_stock");
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.stockOf("RARE")).toBe(1);
    expect(world.stripeCallsOf("capture")).toEqual([]);
    expect(world.intent(defined(order.paymentIntentId)).state).toBe("canceled");
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "out-of-stock", args: ["RARE", "voided"] },
    ]);
    expect(world.timelineEntry(order.orderId, "out-of-stock")?.detail).toEqual({
      ok: false,
      reason: "out_of_stock",
      sku: "RARE",
      requested: 2,
      available: 1,
    });
    expect(world.timelineEntry(order.orderId, "cancelled-out-of-stock")?.detail).toEqual({
      status: "cancelled_out_of_stock",
      sku: "RARE",
      settlement: "voided",
    });
    expect(world.timelineKinds(order.orderId)).not.toContain("stock-released");
    expect(world.runFailures).toEqual([]);
  });

  it("refunds instead when the authorization got captured between the look and the void", async () => {
    const { world, place } = setup();
    world.addProduct("RARE", 0);
    const order = world.addPaidOrder({ lines: [{ sku: "RARE", quantity: 1 }] });
    const intentId = defined(order.paymentIntentId);
    world.failNext("payments.voidAuthorization", () => {
      Object.assign(world.intent(intentId), { state: "succeeded", amountCaptured: 2500 });
    });

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { outcome: "cancelled_out_of_stock" } });
    expect(run.steps.find((step) => step.id === "return-payment")?.detail).toBe(2);
    expect(world.intent(intentId)).toMatchObject({ state: "succeeded", amountRefunded: 2500 });
    expect(world.timelineKinds(order.orderId)).not.toContain("authorization-voided");
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "out-of-stock", args: ["RARE", "refunded"] },
    ]);
  });

  it("fails the run and alerts ops with the PaymentIntent's state when Stripe keeps refusing the void", async () => {
    const { world, place } = setup();
    world.addProduct("RARE", 0);
    const order = world.addPaidOrder({ lines: [{ sku: "RARE", quantity: 1 }] });
    const intentId = defined(order.paymentIntentId);
    // Stripe answers the void "captured" (replayed for its key) while the PaymentIntent reads uncaptured.
    world.failNext("payments.voidAuthorization", () => {
      world.intent(intentId).state = "succeeded";
    });
    world.failNext("payments.retrieve", () => (world.intent(intentId).state = "requires_capture"), 7);

    const run = await place(order);

    expect(run.steps.find((step) => step.id === "return-payment")?.detail).toBe(6);
    expect(failed(run).message).toBe(`PaymentIntent ${intentId} became succeeded while voiding it`);
    expect(world.runFailures.map((failure) => failure.error.message)).toEqual([failed(run).message]);
    expect(world.emails).toEqual([]);
  });

  it("undoes nothing when a re-drive gave the order to another run meanwhile", async () => {
    const { world, place } = setup();
    world.addProduct("RARE", 0);
    const order = world.addPaidOrder({ lines: [{ sku: "RARE", quantity: 1 }] });
    // The re-drive lands right after the reservation was refused.
    const reserve = world.inventoryPort.reserve;
    world.inventoryPort.reserve = async (...args) => {
      const outcome = await reserve(...args);
      world.redriveTo(order.orderId, "new-run-claim");
      return outcome;
    };

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { outcome: "cancelled_out_of_stock" } });
    expect(stepIds(run)).toEqual(["claim", "check-claim"]);
    expect(world.order(order.orderId).status).toBe("fulfilling");
    expect(world.intent(defined(order.paymentIntentId)).state).toBe("requires_capture");
    expect(world.emails).toEqual([]);
  });

  it("a cancel landed before the stock was taken: the run returns the payment and ends the order, as the cleanup would", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.failNext("inventory.reserve", () => world.requestCancel(order.orderId));

    const run = await place(order);

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, stopped: "cancelled" },
    });
    expect(stepIds(run)).toEqual([
      "claim",
      "check-claim",
      "return-payment",
      "mark-cancelled",
      "send-cancelled",
    ]);
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.timelineKinds(order.orderId)).toEqual(["claimed", "authorization-voided", "cancelled"]);
    // The authorization is voided once, under its idempotency key (the cleanup uses the same one).
    expect(world.stripeCallsOf("voidAuthorization").map((call) => call.args)).toEqual([
      [order.paymentIntentId, `void-${order.orderId}`],
    ]);
  });
});

describe("fulfill-order (fast tier): the charge fails", () => {
  it("declined: releases the stock, voids the authorization, ends payment_failed, e-mails once, fails the run and alerts once", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }], customerId: "cus_decline" });
    world.failNext("payments.capture", declined());

    const run = await place(order);

    const error = failed(run);
    const reason = "declined: card declined (card_declined): Your card was declined.";
    expect(error.name).toBe("NonRetriableError");
    expect(error.message).toBe(`Payment for order ${order.orderId} failed: ${reason}`);
    // The root cause stays attached for the logs: the failed step, and the gateway's rejection in it.
    expect(error.cause).toBeInstanceOf(StepError);
    expect((error.cause as StepError).cause).toMatchObject({ name: "PaymentRejectedError" });
    expect(run.steps.find((step) => step.id === "charge-card")?.detail).toBe(1); // a decline is not retried
    expect(stepIds(run)).toEqual([
      "claim",
      "charge-card",
      "check-claim",
      "release-stock",
      "return-payment",
      "mark-payment-failed",
      "send-payment-failed",
    ]);
    expect(world.order(order.orderId).status).toBe("payment_failed");
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.reservations.get(order.orderId)?.status).toBe("released");
    expect(world.intent(defined(order.paymentIntentId)).state).toBe("canceled");
    expect(world.paymentRows.get(order.orderId)?.status).toBe("voided");
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "payment-failed", args: [reason] },
    ]);
    expect(world.timelineEntry(order.orderId, "stock-released")?.detail).toEqual({
      released: [{ sku: "MUG", quantity: 2 }],
    });
    expect(world.timelineEntry(order.orderId, "authorization-voided")?.detail).toEqual({ outcome: "voided" });
    expect(world.timelineEntry(order.orderId, "payment-failed")?.detail).toEqual({
      status: "payment_failed",
      error: reason,
      settlement: "voided",
    });
    expect(world.runFailures).toEqual([
      {
        functionId: "shop-fulfill-order",
        runId: run.runId,
        orderId: order.orderId,
        customerId: "cus_decline",
        error: { name: "NonRetriableError", message: error.message },
      },
    ]);
  });

  it("money taken but never recorded: retries the capture, then refunds in full, ends cancelled and says refunded", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const intentId = defined(order.paymentIntentId);
    // Stripe captures, but every answer is lost on the way back.
    world.failNext(
      "payments.capture",
      () => {
        Object.assign(world.intent(intentId), { state: "succeeded", amountCaptured: 2500 });
        throw new Error("socket hang up");
      },
      6,
    );

    const run = await place(order);

    expect(failed(run).message).toBe(`Payment for order ${order.orderId} failed: socket hang up`);
    expect(run.steps.find((step) => step.id === "charge-card")?.detail).toBe(6);
    expect(world.order(order.orderId).status).toBe("cancelled");
    expect(world.intent(intentId)).toMatchObject({ state: "succeeded", amountRefunded: 2500 });
    expect(world.stripeCallsOf("refundInFull")[0]?.args).toEqual([intentId, `refund-${order.orderId}`]);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({
      status: "refunded",
      amountCaptured: 2500,
      amountRefunded: 2500,
    });
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "cancelled", args: ["refunded"] },
    ]);
    expect(world.timelineEntry(order.orderId, "payment-refunded")?.detail).toEqual({
      refundId: "re_1",
      amount: 2500,
    });
    expect(world.timelineEntry(order.orderId, "cancelled")?.detail).toEqual({
      status: "cancelled",
      reason: "payment taken but not recorded: socket hang up",
      settlement: "refunded",
    });
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.runFailures).toHaveLength(1);
  });

  it("an order without a PaymentIntent fails for good and returns nothing", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], paymentIntentId: null });

    const run = await place(order);

    expect(failed(run).message).toBe(
      `Payment for order ${order.orderId} failed: Order ${order.orderId} has no PaymentIntent to capture`,
    );
    expect(run.steps.find((step) => step.id === "charge-card")?.detail).toBe(1);
    expect(world.order(order.orderId).status).toBe("payment_failed");
    expect(world.timelineEntry(order.orderId, "payment-not-returned")?.detail).toEqual({
      reason: "no payment intent",
    });
    expect(world.timelineEntry(order.orderId, "payment-failed")?.detail).toMatchObject({
      settlement: "none",
    });
    expect(world.stockOf("MUG")).toBe(5);
  });

  it("adopts the end the cancel cleanup already gave the order, and e-mails that one", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.failNext("payments.capture", () => {
      // The cleanup ended the order first (its own run id).
      world.order(order.orderId).status = "cancelled";
      void world.timelinePort.record(order.orderId, "cancelled", { reason: "customer asked" }, "cleanup-run");
      throw declined();
    });

    const run = await place(order);

    expect(failed(run).name).toBe("NonRetriableError");
    expect(world.order(order.orderId).status).toBe("cancelled");
    expect(world.emails.map(({ template, args }) => ({ template, args }))).toEqual([
      { template: "cancelled", args: ["voided"] },
    ]);
    expect(stepIds(run)).toContain("send-cancelled");
    expect(world.timelineKinds(order.orderId)).not.toContain("payment-failed");
  });
});

describe("fulfill-order (fast tier): a cancel or re-drive lands while a step is in flight", () => {
  it("charge: a capture answered after the cancel is refunded by the step itself and not recorded as a capture", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const intentId = defined(order.paymentIntentId);
    world.failNext("payments.capture", () => world.requestCancel(order.orderId));

    const run = await place(order);

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, stopped: "cancelled" },
    });
    expect(stepIds(run)).toEqual([
      "claim",
      "charge-card",
      "check-claim",
      "release-stock",
      "return-payment",
      "mark-cancelled",
      "send-cancelled",
    ]);
    expect(world.intent(intentId)).toMatchObject({ state: "succeeded", amountRefunded: 2500 });
    expect(world.stripeCallsOf("refundInFull")[0]?.args).toEqual([intentId, `refund-${order.orderId}`]);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({
      providerId: intentId,
      currency: "eur",
      status: "refunded",
      amountCaptured: 2500,
      amountRefunded: 2500,
    });
    expect(world.timelineKinds(order.orderId)).not.toContain("payment-captured");
    expect(world.timelineEntry(order.orderId, "payment-captured-after-cancel")).toMatchObject({
      detail: { amountCaptured: 2500, refundId: "re_1" },
      runId: run.runId,
    });
    expect(world.carrierBookings.size).toBe(0);
  });

  it("charge: a capture answered after a re-drive is left to the new run", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.failNext("payments.capture", () => world.redriveTo(order.orderId, "new-run-claim"));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "superseded" } });
    // Superseded, not cancelled: the new run owns the order, so this one compensates nothing.
    expect(stepIds(run)).toEqual(["claim", "charge-card"]);
    expect(world.stripeCallsOf("refundInFull")).toEqual([]);
    expect(world.paymentRows.has(order.orderId)).toBe(false);
    expect(world.timelineKinds(order.orderId)).not.toContain("payment-captured-after-cancel");
  });

  it("shipment: a booking answered after the cancel is voided with the carrier, not recorded", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.failNext("shipments.bookWithCarrier", () => world.requestCancel(order.orderId));

    const run = await place(order);

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, stopped: "cancelled" },
    });
    expect(stepIds(run)).toEqual([
      "claim",
      "charge-card",
      "check-address",
      "check-claim",
      "release-stock",
      "return-payment",
      "mark-cancelled",
      "send-cancelled",
    ]);
    expect(world.voidedLabels).toEqual(["TRK1"]);
    expect(world.shipmentRows.has(order.orderId)).toBe(false);
    expect(world.order(order.orderId).status).toBe("cancelled");
    expect(world.timelineEntry(order.orderId, "shipment-voided")).toMatchObject({
      detail: expect.objectContaining({ trackingNumber: "TRK1", carrier: "FakePost", outcome: "voided" }),
      runId: run.runId,
    });
    expect(world.notices).toEqual([]);
    expect(world.order(order.orderId).attentionReason).toBeNull();
    // One cancellation e-mail, under the key the cleanup's would take.
    expect(world.emails.map((email) => [email.template, email.key])).toEqual([
      ["cancelled", `cancelled-${order.orderId}`],
    ]);
  });

  it("shipment: two parcels booked after a cancel are each voided, each with an entry of its own", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }] });
    world.parcelsPerOrder.set(order.orderId, 2);
    world.failNext("shipments.bookWithCarrier", () => world.requestCancel(order.orderId));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "cancelled" } });
    expect(world.voidedLabels).toEqual(["TRK1", "TRK1-2"]);
    expect(
      world.timelineEntries
        .filter((entry) => entry.kind === "shipment-voided")
        .map(({ detail, runId }) => [detail.trackingNumber, detail.parcelNumber, runId]),
    ).toEqual([
      ["TRK1", 1, `${run.runId}/parcel-1`],
      ["TRK1-2", 2, `${run.runId}/parcel-2`],
    ]);
    expect(world.order(order.orderId).status).toBe("cancelled");
    expect(world.notices).toEqual([]);
  });

  it("shipment: a booking the carrier cannot void flags the order and tells ops to stop the parcel", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.carrierVoidOutcome = "not-voidable";
    world.failNext("shipments.bookWithCarrier", () => world.requestCancel(order.orderId));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "cancelled" } });
    expect(world.order(order.orderId).attentionReason).toBe(
      "a parcel was booked after the order was cancelled",
    );
    expect(world.notices).toEqual([
      {
        key: "label-not-voidable-TRK1",
        title: "Parcel booked for a cancelled order",
        runId: run.runId,
        fields: {
          orderId: order.orderId,
          trackingNumber: "TRK1",
          action: "Stop the parcel with the carrier",
        },
      },
    ]);
  });

  it("shipment: a booking answered after a re-drive is left to the new run", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.failNext("shipments.bookWithCarrier", () => world.redriveTo(order.orderId, "new-run-claim"));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "superseded" } });
    expect(world.voidedLabels).toEqual([]);
    expect(world.timelineKinds(order.orderId)).not.toContain("shipment-voided");
  });

  it("digital-only: a cancel before the guarded record stops it, with nothing to void", async () => {
    const { world, place } = setup();
    world.addProduct("EBOOK", 100, { digital: true });
    const order = world.addPaidOrder({ lines: [{ sku: "EBOOK", quantity: 1 }] });
    world.failNext("shipments.bookWithCarrier", () => world.requestCancel(order.orderId));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "cancelled" } });
    expect(world.voidedLabels).toEqual([]);
    expect(world.timelineKinds(order.orderId)).not.toContain("shipment-voided");
  });
});
