import { Inngest } from "inngest";
import { holdReleased } from "../../src/events/contracts";
import { createFulfillOrder } from "../../src/inngest/functions/fulfill-order";
import type { WorkflowSettings } from "../../src/inngest/dependencies";
import { checkAddress } from "../../src/inngest/steps/check-address";
import type { StepContext } from "../../src/inngest/steps/context";
import {
  awaitHoldRelease,
  liftHold,
  maxHoldWaits,
  waitOutFulfilmentHold,
} from "../../src/inngest/steps/hold-fulfilment";
import { emailKeys } from "../../src/notifications/customer-messages";
import { defined } from "../support/defined";
import { defaultSettings, FakeWorkflowWorld } from "../support/fakes/workflow";
import { runFunction, type DriverOptions, type RunOutcome } from "../support/fakes/step-driver";

/**
 * The fast tier of fulfill-order's holds (the FULFILMENT_HOLD window, a hold placed by ops or by
 * the address check, one never released), the address check, the capture that lands after a
 * cancel once Stripe has refunded some or all of it, and the re-drive of an order whose parcel is
 * booked: each asserted by what the customer, Stripe, ops and the order's holds see.
 */

function setup(settings: WorkflowSettings = defaultSettings) {
  const world = new FakeWorkflowWorld();
  const fn = createFulfillOrder(new Inngest({ id: "shop", isDev: true }), world.dependencies(settings));
  const place = (
    order: { orderId: string; paymentIntentId: string | null },
    options: DriverOptions = {},
  ): Promise<RunOutcome> =>
    runFunction(
      fn,
      {
        name: "shop/order.placed",
        data: {
          orderId: order.orderId,
          customerId: "cus_fake",
          email: "buyer@example.com",
          total: 2500,
          currency: "eur",
          paymentIntentId: order.paymentIntentId,
          fulfilmentKey: order.orderId,
        },
      },
      options,
    );
  return { world, place };
}

const stepIds = (run: RunOutcome) => run.steps.map((step) => step.id);
const stepOf = (run: RunOutcome, id: string) => run.steps.find((step) => step.id === id);

const delivered = (orderId: string) => ({
  name: "shop/shipment.delivered",
  data: { orderId, trackingNumber: "TRK1", deliveredAt: "2026-12-01T10:00:00.000Z" },
});

const released = (orderId: string, holdId: string) => ({
  name: holdReleased.name,
  data: { orderId, holdId },
});

/** What Inngest is told for a wait on the hold's release. */
const releaseWait = (timeout: string) => ({
  event: holdReleased.name,
  timeout,
  if: "async.data.orderId == event.data.orderId",
});

/**
 * Everything up to the label when nothing holds the order (the first look at the hold comes with
 * the address check; the stock is reserved in the claim's step: decision 0195).
 */
const toTheLabel = ["claim", "charge-card", "check-address"];
/** From the label on, when a hold was waited out first: create-shipment is a step of its own. */
const fromTheLabel = [
  "create-shipment",
  "send-confirmation",
  "wait-for-delivery",
  "mark-delivered",
  "wait-after-delivery",
  "send-review-request",
];
/** After a check-address that found no hold and bought the label in its own step (decision 0195). */
const afterTheBooking = fromTheLabel.slice(1);

/** A context whose step tools run each body at once and answer waits from `events` (else a timeout). */
function stepContext(
  world: FakeWorkflowWorld,
  orderId: string,
  settings: WorkflowSettings = defaultSettings,
  events: Record<string, unknown> = {},
): StepContext {
  const step = {
    run: async (_id: string, body: () => Promise<unknown>) => body(),
    waitForEvent: async (id: string) => events[id] ?? null,
    sleep: async () => undefined,
  };
  return {
    step: step as unknown as StepContext["step"],
    deps: world.dependencies(settings),
    orderId,
    runId: "run-1",
  };
}

describe("fulfill-order (fast tier): FULFILMENT_HOLD", () => {
  const settings = { ...defaultSettings, fulfilmentHold: "2h" };

  it("holds the order for the window before capturing, then ends its own hold and ships", async () => {
    const { world, place } = setup(settings);
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    const run = await place(order, { events: { "wait-for-delivery": delivered(order.orderId) } });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    // One step for the window, the wait: reserve-stock places its hold and charge-card ends it.
    expect(stepIds(run)).toEqual([
      "claim",
      "wait-fulfilment-hold",
      ...toTheLabel.slice(1),
      ...afterTheBooking,
    ]);
    expect(stepOf(run, "wait-fulfilment-hold")?.detail).toEqual(releaseWait("2h"));
    expect(world.holdChanges).toEqual([
      { orderId: order.orderId, change: "placed", reason: "fulfilment_window", by: "workflow" },
      { orderId: order.orderId, change: "released", reason: "fulfilment_window", by: "workflow" },
    ]);
    expect(world.holdRows.has(order.orderId)).toBe(false);
    expect(world.stripeCallsOf("capture")).toHaveLength(1);
  });

  // A run begun before the window was one wait: its memoised reserve-stock has no `windowHold`.
  const olderReservation = { ok: true, reserved: [{ sku: "MUG", quantity: 1 }] };
  /** Such a run's memoised claim: no `reservation` in it (reserve-stock was a step of its own). */
  const olderClaim = (
    world: FakeWorkflowWorld,
    order: { orderId: string; paymentIntentId: string | null },
  ) => {
    Object.assign(world.order(order.orderId), { claimId: "run-run-1", status: "fulfilling" });
    return {
      claimed: true,
      claimId: "run-run-1",
      lines: [{ sku: "MUG", quantity: 1 }],
      paymentIntentId: order.paymentIntentId,
    };
  };

  it("a run memoised by the older step shape, waiting in the window, ends it with its own end-fulfilment-hold", async () => {
    const { world, place } = setup(settings);
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const hold = await world.holdsPort.placeHold(order.orderId, "fulfilment_window", { by: "workflow" });

    const run = await place(order, {
      events: { "wait-for-delivery": delivered(order.orderId) },
      memoised: {
        claim: olderClaim(world, order),
        "reserve-stock": olderReservation,
        "place-fulfilment-hold": hold?.holdId ?? null,
      },
    });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(stepIds(run)).toEqual([
      "wait-fulfilment-hold",
      "end-fulfilment-hold",
      ...toTheLabel.slice(1),
      ...afterTheBooking,
    ]);
    expect(world.holdChanges.map((change) => change.change)).toEqual(["placed", "released"]);
    expect(world.holdRows.has(order.orderId)).toBe(false);
    expect(world.stripeCallsOf("capture")).toHaveLength(1);
  });

  it("a run memoised by the older step shape up to reserve-stock places the window's hold in its own step", async () => {
    const { world, place } = setup(settings);
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    const run = await place(order, {
      events: { "wait-for-delivery": delivered(order.orderId) },
      memoised: { claim: olderClaim(world, order), "reserve-stock": olderReservation },
    });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(stepIds(run)).toEqual([
      "place-fulfilment-hold",
      "wait-fulfilment-hold",
      "end-fulfilment-hold",
      ...toTheLabel.slice(1),
      ...afterTheBooking,
    ]);
    expect(world.holdChanges).toEqual([
      { orderId: order.orderId, change: "placed", reason: "fulfilment_window", by: "workflow" },
      { orderId: order.orderId, change: "released", reason: "fulfilment_window", by: "workflow" },
    ]);
  });

  it("leaves a hold ops put on the order in place of the window's, and waits for its release", async () => {
    const { world, place } = setup(settings);
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    await world.holdsPort.placeHold(order.orderId, "customer_request", { by: "ops@shop.test" });

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "held" } });
    expect(world.holdRows.get(order.orderId)).toMatchObject({
      reason: "customer_request",
      by: "ops@shop.test",
    });
    expect(world.holdChanges.filter((change) => change.change === "released")).toEqual([]);
    expect(world.carrierBookings.size).toBe(0);
  });

  it("the step: waits the window, and says whether ops ended it early; a window of 0s waits not at all", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    await expect(waitOutFulfilmentHold.invoke(stepContext(world, orderId))).resolves.toEqual({
      waited: false,
    });
    expect(world.holdChanges).toEqual([]);
    await expect(waitOutFulfilmentHold.invoke(stepContext(world, orderId, settings))).resolves.toEqual({
      waited: true,
      releasedEarly: false,
    });
    const early = { "wait-fulfilment-hold": released(orderId, "hold-2") };
    await expect(waitOutFulfilmentHold.invoke(stepContext(world, orderId, settings, early))).resolves.toEqual(
      { waited: true, releasedEarly: true },
    );
  });

  it("lift-hold: takes the hold off an order that will not be fulfilled, once, and says which", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    await world.holdsPort.placeHold(orderId, "dispute", { by: "stripe" });

    await expect(liftHold.run(stepContext(world, orderId))).resolves.toBe("dispute");
    await expect(liftHold.run(stepContext(world, orderId))).resolves.toBeNull();
    expect(world.holdRows.has(orderId)).toBe(false);
    expect(world.holdChanges.at(-1)).toEqual({
      orderId,
      change: "released",
      reason: "dispute",
      by: "workflow",
    });
  });
});

describe("fulfill-order (fast tier): a hold before the label", () => {
  it("waits for the release of an ops hold, reading the hold again every 6 hours, then ships", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    await world.holdsPort.placeHold(order.orderId, "customer_request", { by: "ops@shop.test" });
    // The first look finds the hold; ops release it before the second.
    world.failNext("holds.current", () => undefined);
    world.failNext("holds.current", () => world.holdRows.delete(order.orderId));

    const run = await place(order, { events: { "wait-for-delivery": delivered(order.orderId) } });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(stepIds(run)).toEqual([...toTheLabel, "wait-hold-release-0", "check-hold-1", ...fromTheLabel]);
    expect(stepOf(run, "wait-hold-release-0")?.detail).toEqual(releaseWait("6h"));
    expect(world.order(order.orderId).status).toBe("completed");
    expect(world.notices).toEqual([]);
  });

  it("the step: says whether the order was held and whether the hold ended, and names the hold in each look", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const looks: { id: string; output: unknown }[] = [];
    const ctx = stepContext(world, orderId);
    const recording = {
      ...ctx,
      step: {
        ...ctx.step,
        run: async (id: string, body: () => Promise<unknown>) => {
          const output = await body();
          looks.push({ id, output });
          return output;
        },
      } as unknown as StepContext["step"],
    };

    await expect(awaitHoldRelease.invoke(recording)).resolves.toEqual({ held: false });
    expect(looks).toEqual([{ id: "check-hold-0", output: null }]);

    await world.holdsPort.placeHold(orderId, "high_risk", { by: "ops@shop.test" });
    world.failNext("holds.current", () => undefined);
    world.failNext("holds.current", () => world.holdRows.delete(orderId));
    looks.length = 0;
    await expect(awaitHoldRelease.invoke(recording)).resolves.toEqual({ held: true, released: true });
    expect(looks).toEqual([
      { id: "check-hold-0", output: { reason: "high_risk", holdId: "hold-1" } },
      { id: "check-hold-1", output: null },
    ]);

    await world.holdsPort.placeHold(orderId, "high_risk", { by: "ops@shop.test" });
    await expect(awaitHoldRelease.invoke(recording)).resolves.toEqual({ held: true, released: false });
  });

  it("after 50 days on hold stops before the label and tells ops once; the hold stays", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    await world.holdsPort.placeHold(order.orderId, "customer_request", { by: "ops@shop.test" });

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { orderId: order.orderId, stopped: "held" } });
    // The first of the 200 looks is the address check's.
    const looks = stepIds(run).filter((id) => id.startsWith("check-hold-"));
    expect(looks).toHaveLength(maxHoldWaits - 1);
    expect(looks[0]).toBe("check-hold-1");
    expect(looks.at(-1)).toBe(`check-hold-${maxHoldWaits - 1}`);
    expect(stepIds(run).at(-1)).toBe("alert-held-too-long");
    expect(world.notices).toEqual([
      {
        title: "Order on hold for 50 days",
        runId: run.runId,
        fields: {
          orderId: order.orderId,
          action: "Release the hold (then re-drive the order) or cancel it",
        },
      },
    ]);
    expect(world.holdRows.get(order.orderId)).toMatchObject({ reason: "customer_request" });
    expect(world.carrierBookings.size).toBe(0);
    expect(world.emailsTo(order.orderId)).toEqual([]);
  });
});

describe("fulfill-order (fast tier): a run begun before the first look came with the address check", () => {
  // Its history holds a check-address outcome without `hold`, and `check-hold-0` if it got that far.
  const oldCheckAddress = { deliverable: true };

  it("finds its memoised `check-hold-0` and goes on from it, reading no hold for that look", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    // Any read of the hold now would be a look the history already answered.
    world.failNext("holds.current", new Error("the first look was read again"));

    const run = await place(order, {
      events: { "wait-for-delivery": delivered(order.orderId) },
      memoised: { "check-address": oldCheckAddress, "check-hold-0": null },
    });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(stepIds(run)).toEqual(["claim", "charge-card", ...fromTheLabel]);
    expect(world.order(order.orderId).status).toBe("completed");
  });

  it("a memoised look that found a hold: waits for its release as then", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const hold = await world.holdsPort.placeHold(order.orderId, "customer_request", { by: "ops@shop.test" });
    // Released before the next look.
    world.failNext("holds.current", () => world.holdRows.delete(order.orderId));

    const run = await place(order, {
      events: { "wait-for-delivery": delivered(order.orderId) },
      memoised: {
        "check-address": oldCheckAddress,
        "check-hold-0": { reason: "customer_request", holdId: hold?.holdId },
      },
    });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(stepIds(run)).toEqual([
      "claim",
      "charge-card",
      "wait-hold-release-0",
      "check-hold-1",
      ...fromTheLabel,
    ]);
  });

  it("stopped after check-address: runs `check-hold-0` now, which finds the hold placed since", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    await world.holdsPort.placeHold(order.orderId, "customer_request", { by: "ops@shop.test" });
    world.failNext("holds.current", () => undefined);
    world.failNext("holds.current", () => world.holdRows.delete(order.orderId));

    const run = await place(order, {
      events: { "wait-for-delivery": delivered(order.orderId) },
      memoised: { "check-address": oldCheckAddress },
    });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(stepIds(run)).toEqual([
      "claim",
      "charge-card",
      "check-hold-0",
      "wait-hold-release-0",
      "check-hold-1",
      ...fromTheLabel,
    ]);
  });
});

describe("fulfill-order (fast tier): the address check", () => {
  it("an address the carrier cannot deliver to: holds the order, flags it, tells ops once, e-mails the customer, ships once corrected", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const { orderId } = order;
    world.addressVerdicts.set(orderId, { deliverable: false, message: "Unknown street" });
    let held: unknown;
    // The address check's read of the hold, before it places the address hold.
    world.failNext("holds.current", () => undefined);
    // The next look finds the address hold; the customer's correction then releases it.
    world.failNext("holds.current", () => {
      held = world.holdRows.get(orderId);
      world.holdRows.delete(orderId);
    });

    const run = await place(order, { events: { "wait-for-delivery": delivered(orderId) } });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(stepIds(run)).toEqual([...toTheLabel, "wait-hold-release-0", "check-hold-1", ...fromTheLabel]);
    expect(held).toMatchObject({ reason: "address", note: "Unknown street", by: "address-check" });
    expect(world.timelineEntry(orderId, "address-undeliverable")).toMatchObject({
      detail: { message: "Unknown street" },
      runId: run.runId,
    });
    expect(world.order(orderId).attentionReason).toBe(
      "the carrier cannot deliver to the address: Unknown street",
    );
    expect(world.notices).toEqual([
      {
        title: "Order held: the carrier cannot deliver to its address",
        runId: run.runId,
        fields: {
          orderId,
          carrierMessage: "Unknown street",
          action: "The customer was e-mailed a link to correct it; release the hold once it is right",
        },
      },
    ]);
    expect(world.emails.filter((email) => email.template === "address-correction")).toEqual([
      {
        key: emailKeys.addressCorrection(orderId, "hold-1"),
        orderId,
        template: "address-correction",
        args: ["Unknown street"],
      },
    ]);
  });

  it("a retry that finds its address hold already placed e-mails the customer, and alerts nothing more", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const { orderId } = order;
    world.addressVerdicts.set(orderId, { deliverable: false, message: "Unknown street" });
    await world.holdsPort.placeHold(orderId, "address", { note: "Unknown street", by: "address-check" });

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "held" } });
    expect(world.emailsTo(orderId)).toEqual(["address-correction"]);
    expect(world.emails[0]?.key).toBe(emailKeys.addressCorrection(orderId, "hold-1"));
    expect(world.notices.map((notice) => notice.title)).toEqual(["Order on hold for 50 days"]);
    expect(world.timelineKinds(orderId)).not.toContain("address-undeliverable");
    expect(world.order(orderId).attentionReason).toBeNull();
  });

  it("an order already on another hold is not asked for a new address; it waits for that hold", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const { orderId } = order;
    world.addressVerdicts.set(orderId, { deliverable: false, message: "Unknown street" });
    await world.holdsPort.placeHold(orderId, "customer_request", { by: "ops@shop.test" });

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "held" } });
    expect(world.emailsTo(orderId)).toEqual([]);
    expect(world.holdRows.get(orderId)).toMatchObject({ reason: "customer_request" });
    expect(world.notices.map((notice) => notice.title)).toEqual(["Order on hold for 50 days"]);
  });

  it("an undeliverable order under an ops hold: once ops release theirs, the address hold lands, ops are told and the customer e-mailed once, and it ships only after the correction", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const { orderId } = order;
    world.addressVerdicts.set(orderId, { deliverable: false, message: "Unknown street" });
    await world.holdsPort.placeHold(orderId, "customer_request", { by: "ops@shop.test" });
    let bookedWhileHeld = false;
    // Each look at the hold: ops release theirs on the run's second look while waiting on it; the
    // customer corrects the address once the link for the address hold has been e-mailed.
    let opsLooks = 0;
    const onLook = () => {
      const hold = world.holdRows.get(orderId);
      if (world.carrierBookings.has(orderId) && hold) bookedWhileHeld = true;
      if (hold?.reason === "customer_request" && ++opsLooks === 3) {
        void world.holdsPort.releaseHold(orderId, { by: "ops@shop.test" });
      }
      const mailed = world.emails.some(
        (email) => email.key === emailKeys.addressCorrection(orderId, hold?.holdId ?? ""),
      );
      if (hold?.reason === "address" && mailed) {
        world.addressVerdicts.set(orderId, { deliverable: true });
        void world.holdsPort.releaseHold(orderId, { by: "customer", onlyReason: "address" });
      }
    };
    world.failNext("holds.current", onLook, 50);

    const run = await place(order, { events: { "wait-for-delivery": delivered(orderId) } });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK1" } });
    expect(bookedWhileHeld).toBe(false);
    expect(world.holdChanges).toEqual([
      { orderId, change: "placed", reason: "customer_request", by: "ops@shop.test" },
      { orderId, change: "released", reason: "customer_request", by: "ops@shop.test" },
      { orderId, change: "placed", reason: "address", by: "address-check" },
      { orderId, change: "released", reason: "address", by: "customer" },
    ]);
    expect(world.emails.filter((email) => email.template === "address-correction")).toEqual([
      {
        key: emailKeys.addressCorrection(orderId, "hold-2"),
        orderId,
        template: "address-correction",
        args: ["Unknown street"],
      },
    ]);
    expect(world.notices.map((notice) => notice.title)).toEqual([
      "Order held: the carrier cannot deliver to its address",
    ]);
    expect(world.order(orderId).attentionReason).toBe(
      "the carrier cannot deliver to the address: Unknown street",
    );
    expect(world.timelineKinds(orderId).filter((kind) => kind === "address-undeliverable")).toHaveLength(1);
    // The shipment is booked after the address hold's release (the corrected address), never before.
    const booking = stepIds(run).indexOf("create-shipment");
    expect(booking).toBeGreaterThan(stepIds(run).lastIndexOf("wait-hold-release-1"));
  });

  it("the step: deliverable, or no verdict (no carrier check), goes on; undeliverable says why", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    await expect(checkAddress.invoke(stepContext(world, orderId))).resolves.toEqual({
      deliverable: true,
      hold: null,
    });
    world.addressVerdicts.set(orderId, { deliverable: true });
    await expect(checkAddress.invoke(stepContext(world, orderId))).resolves.toEqual({
      deliverable: true,
      hold: null,
    });
    expect(world.holdChanges).toEqual([]);
    world.addressVerdicts.set(orderId, { deliverable: false, message: "No such number" });
    await expect(checkAddress.invoke(stepContext(world, orderId))).resolves.toEqual({
      deliverable: false,
      message: "No such number",
      held: true,
      hold: { reason: "address", holdId: "hold-1" },
    });
    // Another hold in the way: the address hold is still owed.
    const other = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    await world.holdsPort.placeHold(other.orderId, "high_risk", { by: "ops@shop.test" });
    world.addressVerdicts.set(other.orderId, { deliverable: false, message: "No such number" });
    await expect(checkAddress.invoke(stepContext(world, other.orderId))).resolves.toEqual({
      deliverable: false,
      message: "No such number",
      held: false,
      hold: { reason: "high_risk", holdId: "hold-2" },
    });
  });

  it("the step: an undeliverable order that can no longer be held (cancelled meanwhile) says so, with no hold", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "cancelled" });
    world.addressVerdicts.set(orderId, { deliverable: false, message: "No such number" });

    await expect(checkAddress.invoke(stepContext(world, orderId))).resolves.toEqual({
      deliverable: false,
      message: "No such number",
      held: false,
      hold: null,
    });
    expect(world.holdChanges).toEqual([]);
    expect(world.notices).toEqual([]);
    expect(world.emails).toEqual([]);
  });

  it("await-hold-release: an address corrected while another hold stood needs no address hold; a run begun before `held` counts a seen address hold", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    // The other hold is gone by the first look, and the carrier now takes the address.
    world.addressVerdicts.set(orderId, { deliverable: true });
    await expect(
      awaitHoldRelease.invoke(stepContext(world, orderId), {
        deliverable: false,
        message: "No such number",
        held: false,
      }),
    ).resolves.toEqual({ held: false });
    expect(world.holdChanges).toEqual([]);
    expect(world.emailsTo(orderId)).toEqual([]);

    // Memoised before `held` existed, the address hold in place: the customer's correction ends it.
    world.addressVerdicts.set(orderId, { deliverable: false, message: "No such number" });
    await world.holdsPort.placeHold(orderId, "address", { note: "No such number", by: "address-check" });
    world.failNext("holds.current", () => undefined);
    world.failNext("holds.current", () => world.holdRows.delete(orderId));
    await expect(
      awaitHoldRelease.invoke(stepContext(world, orderId), { deliverable: false, message: "No such number" }),
    ).resolves.toEqual({ held: true, released: true });
    expect(world.holdChanges.map((change) => change.change)).toEqual(["placed"]);
  });
});

describe("await-hold-release: the address hold owed after another hold", () => {
  const undeliverable = { deliverable: false as const, message: "No such number", held: false };

  /** The step's context, running `before(id)` ahead of each step's body and recording the ids. */
  function staged(world: FakeWorkflowWorld, orderId: string, before: (id: string) => Promise<void> | void) {
    const ids: string[] = [];
    const ctx = stepContext(world, orderId);
    const step = {
      ...ctx.step,
      run: async (id: string, body: () => Promise<unknown>) => {
        ids.push(id);
        await before(id);
        return body();
      },
      waitForEvent: async (id: string) => {
        ids.push(id);
        return null;
      },
    } as unknown as StepContext["step"];
    return { ctx: { ...ctx, step }, ids };
  }

  it("goes on, placing nothing, when the carrier no longer answers the address check", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });

    await expect(awaitHoldRelease.invoke(stepContext(world, orderId), undeliverable)).resolves.toEqual({
      held: false,
    });
    expect(world.holdChanges).toEqual([]);
    expect(world.emailsTo(orderId)).toEqual([]);
    expect(world.notices).toEqual([]);
  });

  it("an address hold ops release without a correction is not placed again: ops decided", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.addressVerdicts.set(orderId, { deliverable: false, message: "No such number" });
    const { ctx, ids } = staged(world, orderId, async (id) => {
      if (id === "check-hold-1") await world.holdsPort.releaseHold(orderId, { by: "ops" });
    });

    await expect(awaitHoldRelease.invoke(ctx, undeliverable)).resolves.toEqual({
      held: true,
      released: true,
    });
    expect(ids).toEqual(["check-hold-0", "hold-address-0", "wait-hold-release-0", "check-hold-1"]);
    expect(world.holdChanges).toEqual([
      { orderId, change: "placed", reason: "address", by: "address-check" },
      { orderId, change: "released", reason: "address", by: "ops" },
    ]);
  });

  it("a hold placed between the look and the address hold: waits for it, then places the address hold and waits for the correction", async () => {
    const world = new FakeWorkflowWorld();
    world.addProduct("MUG", 5);
    const { orderId } = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    world.addressVerdicts.set(orderId, { deliverable: false, message: "No such number" });
    const { ctx, ids } = staged(world, orderId, async (id) => {
      // Ops hold the order in the moment after the first look found no hold.
      if (id === "hold-address-0")
        await world.holdsPort.placeHold(orderId, "customer_request", { by: "ops" });
      if (id === "check-hold-2") await world.holdsPort.releaseHold(orderId, { by: "ops" });
      // The customer corrects the address once asked.
      if (id === "check-hold-4") {
        world.addressVerdicts.set(orderId, { deliverable: true });
        await world.holdsPort.releaseHold(orderId, { by: "customer", onlyReason: "address" });
      }
    });

    await expect(awaitHoldRelease.invoke(ctx, undeliverable)).resolves.toEqual({
      held: true,
      released: true,
    });
    expect(ids).toEqual([
      "check-hold-0",
      "hold-address-0",
      "wait-hold-release-0",
      "check-hold-1",
      "wait-hold-release-1",
      "check-hold-2",
      "hold-address-2",
      "wait-hold-release-2",
      "check-hold-3",
      "wait-hold-release-3",
      "check-hold-4",
    ]);
    expect(world.holdChanges).toEqual([
      { orderId, change: "placed", reason: "customer_request", by: "ops" },
      { orderId, change: "released", reason: "customer_request", by: "ops" },
      { orderId, change: "placed", reason: "address", by: "address-check" },
      { orderId, change: "released", reason: "address", by: "customer" },
    ]);
    expect(world.emails.filter((email) => email.template === "address-correction")).toEqual([
      {
        key: emailKeys.addressCorrection(orderId, "hold-2"),
        orderId,
        template: "address-correction",
        args: ["No such number"],
      },
    ]);
    expect(world.notices.map((notice) => notice.title)).toEqual([
      "Order held: the carrier cannot deliver to its address",
    ]);
  });
});

describe("fulfill-order (fast tier): a capture answered after the cancel, Stripe having refunded some", () => {
  it("refunds what is left, and records the whole capture refunded before the compensation runs", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 2 }] });
    const intentId = defined(order.paymentIntentId);
    world.failNext("payments.capture", () => world.requestCancel(order.orderId));
    // The admin refunded 1000 of the capture before the step looks; then return-payment looks.
    world.failNext("payments.retrieve", () => world.refundPartly(intentId, 1000));
    let recorded: unknown;
    world.failNext("payments.retrieve", () => (recorded = { ...world.paymentRows.get(order.orderId) }));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "cancelled" } });
    expect(world.stripeCallsOf("refundInFull")).toHaveLength(1);
    expect(world.intent(intentId)).toMatchObject({ amountCaptured: 5000, amountRefunded: 5000 });
    expect(recorded).toMatchObject({ status: "refunded", amountCaptured: 5000, amountRefunded: 5000 });
    expect(world.timelineEntry(order.orderId, "payment-captured-after-cancel")?.detail).toEqual({
      amountCaptured: 5000,
      refundId: "re_1",
    });
    expect(world.timelineEntry(order.orderId, "cancelled")?.detail).toMatchObject({
      reason: "cancelled by request",
    });
  });

  it("refunded in full already: asks Stripe for no second refund", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }] });
    const intentId = defined(order.paymentIntentId);
    world.failNext("payments.capture", () => world.requestCancel(order.orderId));
    world.failNext("payments.retrieve", () => world.refundPartly(intentId, 2500));
    let recorded: unknown;
    world.failNext("payments.retrieve", () => (recorded = { ...world.paymentRows.get(order.orderId) }));

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { stopped: "cancelled" } });
    expect(world.stripeCallsOf("refundInFull")).toEqual([]);
    expect(recorded).toMatchObject({ status: "refunded", amountCaptured: 2500, amountRefunded: 2500 });
    expect(world.timelineEntry(order.orderId, "payment-captured-after-cancel")?.detail).toEqual({
      amountCaptured: 2500,
      refundId: null,
    });
  });
});

describe("fulfill-order (fast tier): re-driven after the parcel was booked", () => {
  /** A re-drive's steps when the record says delivered: no wait for an event it cannot hear again. */
  const resumedDelivered = [
    "claim",
    "find-booking",
    "send-confirmation",
    "mark-delivered",
    "wait-after-delivery",
    "send-review-request",
  ];
  /** A shipped order whose run failed after the booking, and a re-drive let go of its claim. */
  function bookedOrder(world: FakeWorkflowWorld, deliveredAt: Date | null) {
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "shipped" });
    world.shipmentRows.set(order.orderId, {
      carrier: "FakePost",
      trackingNumber: "TRK9",
      trackingUrl: "https://track.example/TRK9",
      service: "Ground",
      labelUrl: "https://labels.example/TRK9.pdf",
      providerId: "shp_TRK9",
      status: deliveredAt ? "delivered" : "booked",
      deliveredAt,
    });
    return order;
  }

  it("resumes from the booking: e-mails the tracking link, waits for the delivery, asks for a review; charges and books nothing", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, null);

    const run = await place(order, {
      events: {
        "wait-for-delivery": {
          ...delivered(order.orderId),
          data: { ...delivered(order.orderId).data, trackingNumber: "TRK9" },
        },
      },
    });

    expect(run).toMatchObject({
      status: "completed",
      result: { orderId: order.orderId, paymentId: null, trackingNumber: "TRK9" },
    });
    expect(stepIds(run)).toEqual([
      "claim",
      "find-booking",
      "send-confirmation",
      "wait-for-delivery",
      "mark-delivered",
      "wait-after-delivery",
      "send-review-request",
    ]);
    expect(world.emails[0]?.args).toEqual([
      { carrier: "FakePost", trackingNumber: "TRK9", trackingUrl: "https://track.example/TRK9" },
    ]);
    expect(world.emailsTo(order.orderId)).toEqual(["shipped", "review-request"]);
    expect(world.stripeCalls).toEqual([]);
    expect(world.carrierBookings.size).toBe(0);
    expect(world.statusesOf(order.orderId)).toEqual(["delivered", "completed"]);
  });

  it("of a delivered order: takes the delivery from the record instead of waiting for an event it cannot hear again", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, new Date("2026-12-01T10:00:00.000Z"));
    world.order(order.orderId).status = "delivered";

    const run = await place(order);

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK9" } });
    expect(stepIds(run)).toEqual(resumedDelivered);
    expect(world.timelineEntry(order.orderId, "delivered")?.detail).toEqual({
      deliveredAt: "2026-12-01T10:00:00.000Z",
    });
    expect(world.timelineEntry(order.orderId, "review-requested")?.detail).toMatchObject({
      afterDelivery: true,
    });
  });
  /** A second parcel of the booked order, delivered or not. */
  const secondParcel = (deliveredAt: Date | null) => ({
    carrier: "FakePost",
    trackingNumber: "TRK10",
    trackingUrl: "https://track.example/TRK10",
    parcelNumber: 2,
    deliveredAt,
  });
  const firstNotice = {
    carrier: "FakePost",
    trackingNumber: "TRK9",
    trackingUrl: "https://track.example/TRK9",
    parcelNumber: 1,
  };

  it("of an order in two parcels, one delivered: e-mails both tracking links and waits for the last delivery", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, new Date("2026-12-01T10:00:00.000Z"));
    world.laterParcels.set(order.orderId, [secondParcel(null)]);

    const run = await place(order);

    // No delivery event came: the wait timed out, so no delivery mark, and the review is asked anyway.
    expect(stepIds(run)).toEqual([
      "claim",
      "find-booking",
      "send-confirmation",
      "wait-for-delivery",
      "send-review-request",
    ]);
    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK9" } });
    expect(world.trackingEmailParcels.get(order.orderId)).toEqual([
      firstNotice,
      {
        carrier: "FakePost",
        trackingNumber: "TRK10",
        trackingUrl: "https://track.example/TRK10",
        parcelNumber: 2,
      },
    ]);
    expect(world.timelineEntry(order.orderId, "delivered")).toBeUndefined();
    expect(world.timelineEntry(order.orderId, "review-requested")?.detail).toMatchObject({
      afterDelivery: false,
    });
  });

  it("of an order in two parcels, both delivered: the later delivery stands for the order's", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, new Date("2026-12-01T10:00:00.000Z"));
    world.order(order.orderId).status = "delivered";
    world.laterParcels.set(order.orderId, [secondParcel(new Date("2026-12-02T08:30:00.000Z"))]);

    const run = await place(order);

    expect(stepIds(run)).toEqual(resumedDelivered);
    expect(world.timelineEntry(order.orderId, "delivered")?.detail).toEqual({
      deliveredAt: "2026-12-02T08:30:00.000Z",
    });
  });

  it("of an order in two parcels, the first delivered later: the later delivery still stands", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, new Date("2026-12-03T09:00:00.000Z"));
    world.order(order.orderId).status = "delivered";
    world.laterParcels.set(order.orderId, [secondParcel(new Date("2026-12-02T08:30:00.000Z"))]);

    await place(order);

    expect(world.timelineEntry(order.orderId, "delivered")?.detail).toEqual({
      deliveredAt: "2026-12-03T09:00:00.000Z",
    });
  });

  it("resumed from a find-booking memoised before orders had several parcels: its one notice is the parcel", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, null);
    const notice = { carrier: "FakePost", trackingNumber: "TRK9", trackingUrl: "https://track.example/TRK9" };

    const run = await place(order, {
      memoised: { "find-booking": { notice, deliveredAt: "2026-12-01T10:00:00.000Z" } },
    });

    expect(stepIds(run)).toEqual([
      "claim",
      "send-confirmation",
      "mark-delivered",
      "wait-after-delivery",
      "send-review-request",
    ]);
    expect(world.trackingEmailParcels.get(order.orderId)).toEqual([notice]);
    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: "TRK9" } });
  });

  it("resumed from a find-booking memoised as nothing found: no tracking e-mail, the review asked", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, null);

    const run = await place(order, { memoised: { "find-booking": null } });

    expect(stepIds(run)).toEqual(["claim", "wait-after-delivery", "send-review-request"]);
    expect(world.emailsTo(order.orderId)).toEqual(["review-request"]);
  });

  it("resumed from a find-booking memoised before orders had several parcels, with no notice in it: no tracking e-mail", async () => {
    const { world, place } = setup();
    const order = bookedOrder(world, null);

    const run = await place(order, { memoised: { "find-booking": { notice: null, deliveredAt: null } } });

    expect(stepIds(run)).toEqual(["claim", "wait-after-delivery", "send-review-request"]);
    expect(world.trackingEmailParcels.has(order.orderId)).toBe(false);
  });

  it("a booked claim memoised whose parcels are no longer on record: find-booking finds nothing, and the run still ends", async () => {
    const { world, place } = setup();
    world.addProduct("MUG", 5);
    const order = world.addPaidOrder({ lines: [{ sku: "MUG", quantity: 1 }], status: "shipped" });
    const claim = {
      claimed: true,
      claimId: "claim-1",
      lines: [{ sku: "MUG", quantity: 1 }],
      paymentIntentId: order.paymentIntentId,
      booked: true,
    };

    const run = await place(order, { memoised: { "claim-id": "claim-1", claim } });

    expect(run).toMatchObject({ status: "completed", result: { trackingNumber: null } });
    expect(stepIds(run)).toEqual(["find-booking", "wait-after-delivery", "send-review-request"]);
    expect(stepOf(run, "find-booking")?.detail).toBe(1);
    expect(world.emailsTo(order.orderId)).toEqual(["review-request"]);
  });
});
