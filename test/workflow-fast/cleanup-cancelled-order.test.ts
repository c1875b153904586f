import { Inngest } from "inngest";
import { createCleanupCancelledOrder } from "../../src/inngest/functions/cleanup-cancelled-order";
import { compensate } from "../../src/inngest/steps/compensate";
import type { StepContext } from "../../src/inngest/steps/context";
import { finishUnfulfilled } from "../../src/inngest/steps/finish-unfulfilled";
import type { OrderStatus } from "../../src/orders/order-repository";
import type { AuthorizationState } from "../../src/payments/payment-gateway";
import { defined } from "../support/defined";
import { FakeWorkflowWorld } from "../support/fakes/workflow";
import { runFunction } from "../support/fakes/step-driver";

/**
 * The fast tier of the cancel cleanup, which runs the same undo steps as fulfill-order's
 * compensation (src/inngest/steps: compensate, release-stock, return-payment, finish-unfulfilled)
 * from the other side of the race: after a fulfilment run was cancelled, whatever state it left.
 */

const cancelledRunId = "cancelled-fulfil-run";

function setup() {
  const world = new FakeWorkflowWorld();
  const fn = createCleanupCancelledOrder(new Inngest({ id: "shop", isDev: true }), world.dependencies());
  /** An order the cancelled run claimed and reserved stock for, left in `status`, cancel requested. */
  const leftBehind = async (options: { status?: OrderStatus; intentState?: AuthorizationState } = {}) => {
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({
      lines: [{ sku: "MUG", quantity: 2 }],
      status: "fulfilling",
      intentState: options.intentState,
    });
    const { orderId } = order;
    world.redriveTo(orderId, "claim-of-cancelled-run");
    await world.timelinePort.record(
      orderId,
      "claimed",
      { claimId: "claim-of-cancelled-run" },
      cancelledRunId,
    );
    await world.inventoryPort.reserve(orderId, [{ sku: "MUG", quantity: 2 }]);
    world.order(orderId).status = options.status ?? "fulfilling";
    world.requestCancel(orderId);
    return { ...order, intentId: defined(order.paymentIntentId) };
  };
  const cleanUp = (orderId: string) =>
    runFunction(fn, {
      name: "inngest/function.cancelled",
      data: { function_id: "shop-fulfill-order", run_id: cancelledRunId, event: { data: { orderId } } },
    });
  return { world, leftBehind, cleanUp };
}

const sentEmails = (world: FakeWorkflowWorld) =>
  world.emails.map(({ template, args }) => ({ template, args }));

describe("cleanup-cancelled-order (fast tier)", () => {
  it("puts the stock back, voids the authorization, ends the order cancelled and e-mails once", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind();

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, outcome: "cancelled", settlement: "voided" },
    });
    expect(world.stockOf("MUG")).toBe(5);
    expect(world.intent(order.intentId).state).toBe("canceled");
    expect(world.order(order.orderId).status).toBe("cancelled");
    expect(sentEmails(world)).toEqual([{ template: "cancelled", args: ["voided"] }]);
  });

  it("adopts payment_failed that the fulfilment marked before it was cancelled, and sends its e-mail with the recorded reason", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ status: "payment_failed" });
    // The fulfilment voided and marked, then was cancelled before its e-mail step.
    world.intent(order.intentId).state = "canceled";
    await world.timelinePort.record(
      order.orderId,
      "payment-failed",
      { status: "payment_failed", error: "declined: card declined", settlement: "voided" },
      cancelledRunId,
    );

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({
      status: "completed",
      result: { outcome: "payment_failed", settlement: "voided" },
    });
    expect(world.order(order.orderId).status).toBe("payment_failed");
    expect(sentEmails(world)).toEqual([{ template: "payment-failed", args: ["declined: card declined"] }]);
    // An authorization already voided is recorded as such, with no second void.
    expect(world.stripeCallsOf("voidAuthorization")).toEqual([]);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({ status: "voided", amountAuthorized: 5000 });
    expect(world.timelineEntries.at(-1)).toMatchObject({
      kind: "authorization-voided",
      detail: { outcome: "already-voided" },
      runId: run.runId,
    });
  });

  it("adopts cancelled_out_of_stock and sends the out-of-stock e-mail for the recorded SKU", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ status: "cancelled_out_of_stock" });
    await world.timelinePort.record(
      order.orderId,
      "cancelled-out-of-stock",
      { status: "cancelled_out_of_stock", sku: "MUG", settlement: "voided" },
      cancelledRunId,
    );

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({ status: "completed", result: { outcome: "cancelled_out_of_stock" } });
    expect(sentEmails(world)).toEqual([{ template: "out-of-stock", args: ["MUG", "voided"] }]);
  });

  it("adopts an end whose timeline entry is missing with empty details rather than failing", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const outOfStock = await leftBehind({ status: "cancelled_out_of_stock" });
    const paymentFailed = await leftBehind({ status: "payment_failed" });

    expect((await cleanUp(outOfStock.orderId)).status).toBe("completed");
    expect((await cleanUp(paymentFailed.orderId)).status).toBe("completed");

    expect(sentEmails(world)).toEqual([
      { template: "out-of-stock", args: ["", "voided"] },
      { template: "payment-failed", args: [""] },
    ]);
  });

  it("leaves an order that ended some other way (expired) as it is, with no e-mail", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ status: "expired" });

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({
      status: "completed",
      result: { outcome: "not-ended", settlement: "voided" },
    });
    expect(world.order(order.orderId).status).toBe("expired");
    expect(world.emails).toEqual([]);
  });

  it("returns nothing for a payment still processing, says why, and tells the customer nothing was taken", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ intentState: "processing" });

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({ status: "completed", result: { outcome: "cancelled", settlement: "none" } });
    expect(world.stripeCallsOf("refundInFull")).toEqual([]);
    expect(world.stripeCallsOf("voidAuthorization")).toEqual([]);
    expect(world.timelineEntry(order.orderId, "payment-not-returned")?.detail).toEqual({
      state: "processing",
    });
    expect(sentEmails(world)).toEqual([{ template: "cancelled", args: ["none"] }]);
  });

  it("refunds what is left of a partly refunded capture, and records the capture as refunded in full", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ intentState: "succeeded" });
    world.refundPartly(order.intentId, 1000);

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({ status: "completed", result: { settlement: "refunded" } });
    expect(world.intent(order.intentId).amountRefunded).toBe(5000);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({
      status: "refunded",
      amountCaptured: 5000,
      amountRefunded: 5000,
    });
    expect(world.timelineEntry(order.orderId, "payment-refunded")?.detail).toEqual({
      refundId: "re_1",
      amount: 5000,
    });
  });

  it("an ops refund landing between its look at Stripe and its refund of what is left is counted: the capture is recorded refunded in full", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ intentState: "succeeded" });
    // Stripe is read with nothing refunded; an ops refund of 1000 lands before the cleanup's refund.
    const retrieve = world.paymentsPort.retrieve.bind(world.paymentsPort);
    let raced = false;
    world.paymentsPort.retrieve = async (paymentIntentId) => {
      const view = await retrieve(paymentIntentId);
      if (!raced) world.refundPartly(paymentIntentId, 1000);
      raced = true;
      return view;
    };

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({ status: "completed", result: { settlement: "refunded" } });
    // Stripe refunded only what was left (4000): never more than captured.
    expect(world.intent(order.intentId).amountRefunded).toBe(5000);
    expect(world.paymentRows.get(order.orderId)).toMatchObject({ status: "refunded", amountRefunded: 5000 });
  });

  it("does not refund a capture already refunded in full again", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ intentState: "succeeded" });
    world.refundPartly(order.intentId, 5000);

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({ status: "completed", result: { settlement: "refunded" } });
    expect(world.stripeCallsOf("refundInFull")).toEqual([]);
    expect(world.timelineEntry(order.orderId, "payment-refunded")?.detail).toEqual({
      refundId: null,
      amount: 5000,
    });
    expect(sentEmails(world)).toEqual([{ template: "cancelled", args: ["refunded"] }]);
  });

  it("a shipped order whose label is handed back ends cancelled from shipped, refunded; one the carrier keeps is left to ops", async () => {
    const { world, leftBehind, cleanUp } = setup();
    const order = await leftBehind({ status: "shipped", intentState: "succeeded" });
    world.shipmentRows.set(order.orderId, {
      carrier: "FakePost",
      trackingNumber: "TRK7",
      trackingUrl: "https://track.example/TRK7",
      service: "Ground",
      labelUrl: "https://labels.example/TRK7.pdf",
      providerId: "shp_TRK7",
      status: "booked",
    });

    const run = await cleanUp(order.orderId);

    expect(run).toMatchObject({
      status: "completed",
      result: { outcome: "cancelled", settlement: "refunded" },
    });
    expect(world.voidedLabels).toEqual(["TRK7"]);
    expect(world.order(order.orderId).status).toBe("cancelled");
    expect(sentEmails(world)).toEqual([{ template: "cancelled", args: ["refunded"] }]);

    const kept = await leftBehind({ status: "shipped", intentState: "succeeded" });
    world.shipmentRows.set(kept.orderId, {
      ...defined(world.shipmentRows.get(order.orderId)),
      trackingNumber: "TRK8",
    });
    world.carrierVoidOutcome = "not-voidable";
    await expect(cleanUp(kept.orderId)).resolves.toMatchObject({ result: { outcome: "needs-ops" } });
    expect(world.order(kept.orderId).status).toBe("shipped");
    expect(world.timelineKinds(kept.orderId)).toContain("cancel-needs-ops");
  });

  it("a compensation that was not told the label was handed back never ends a shipped order", async () => {
    const { world, leftBehind } = setup();
    const order = await leftBehind({ status: "shipped" });
    const step = { run: async (_id: string, body: () => Promise<unknown>) => body() };
    const ctx = {
      step: step as unknown as StepContext["step"],
      deps: world.dependencies(),
      orderId: order.orderId,
      runId: "run-1",
    };

    const result = await compensate(ctx, [], () => ({ status: "cancelled", reason: "cancelled by request" }));

    expect(result).toEqual({ outcome: null, settlement: "none" });
    expect(world.order(order.orderId).status).toBe("shipped");
    expect(world.emails).toEqual([]);
  });
});

describe("finish-unfulfilled: the end it answers", () => {
  function ended(world: FakeWorkflowWorld, orderId: string) {
    const ctx: StepContext = {
      step: {
        run: async (_id: string, body: () => Promise<unknown>) => body(),
      } as unknown as StepContext["step"],
      deps: world.dependencies(),
      orderId,
      runId: "run-late",
    };
    return finishUnfulfilled(ctx, { status: "payment_failed", error: "declined" }, "voided");
  }

  it("answers the cancelled end it adopts with the reason its entry recorded, and e-mails that end", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "cancelled" });
    await world.timelinePort.record(
      orderId,
      "cancelled",
      { status: "cancelled", reason: "cancelled by request", settlement: "voided" },
      "cleanup-run",
    );

    await expect(ended(world, orderId)).resolves.toEqual({
      status: "cancelled",
      reason: "cancelled by request",
    });
    expect(world.order(orderId).status).toBe("cancelled");
    expect(sentEmails(world)).toEqual([{ template: "cancelled", args: ["voided"] }]);
  });

  it("answers an adopted cancelled end without an entry with an empty reason", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "cancelled" });

    await expect(ended(world, orderId)).resolves.toEqual({ status: "cancelled", reason: "" });
    expect(sentEmails(world)).toEqual([{ template: "cancelled", args: ["voided"] }]);
  });
});
