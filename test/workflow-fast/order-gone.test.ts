import { chargeCard } from "../../src/inngest/steps/charge-card";
import { claimOrder } from "../../src/inngest/steps/claim-order";
import { compensate } from "../../src/inngest/steps/compensate";
import type { StepContext } from "../../src/inngest/steps/context";
import { finishUnfulfilled } from "../../src/inngest/steps/finish-unfulfilled";
import { releaseStock } from "../../src/inngest/steps/release-stock";
import { returnPayment } from "../../src/inngest/steps/return-payment";
import type { WorkflowDependencies } from "../../src/inngest/dependencies";
import { FakeWorkflowWorld } from "../support/fakes/workflow";

/**
 * The fulfilment's steps when the order they act on is no longer there (deleted by hand between two
 * steps, or an event naming an order this database never had): each says so clearly, or settles
 * nothing, instead of failing on a missing field and being retried for nothing.
 */

const missingOrderId = "00000000-0000-4000-8000-0000000000aa";

/** A context whose step tools run each body at once, logging the step ids. */
function stepContext(deps: WorkflowDependencies, log: string[] = []): StepContext {
  const step = {
    run: async (id: string, body: () => Promise<unknown>) => {
      log.push(id);
      return body();
    },
  };
  return { step: step as unknown as StepContext["step"], deps, orderId: missingOrderId, runId: "run-1" };
}

describe("the fulfilment's steps on an order that is gone", () => {
  it("claim: a claim found in place whose order can no longer be read fails the run as a vanished order", async () => {
    const world = new FakeWorkflowWorld();
    const deps = world.dependencies();
    const ctx = stepContext({
      ...deps,
      orders: { ...deps.orders, claim: async () => ({ claimed: true }), findForFulfilment: async () => null },
    });

    await expect(claimOrder.invoke(ctx)).rejects.toThrow(`Order ${missingOrderId} does not exist`);
    expect(world.timelineEntries).toEqual([]);
  });

  it("charge-card: short lines of an order that is gone: nothing is captured", async () => {
    const world = new FakeWorkflowWorld();
    const claim = { claimId: "claim-1", lines: [{ sku: "MUG", quantity: 1 }], paymentIntentId: "pi_gone" };
    const short = [{ sku: "PIN", requested: 2, short: 1, amount: 1000 }];

    await expect(chargeCard.invoke(stepContext(world.dependencies()), claim, null, short)).rejects.toThrow(
      `Order ${missingOrderId} does not exist`,
    );
    expect(world.stripeCalls).toEqual([]);
  });

  it("return-payment: no order, no PaymentIntent to settle: says so on the timeline and settles nothing", async () => {
    const world = new FakeWorkflowWorld();

    await expect(returnPayment.run(stepContext(world.dependencies()))).resolves.toBe("none");
    expect(world.stripeCalls).toEqual([]);
    expect(world.timelineEntries).toMatchObject([
      { kind: "payment-not-returned", detail: { reason: "no payment intent" }, runId: "run-1" },
    ]);
  });

  it("compensate for a claim: an order that is gone is not this run's, so nothing is undone or ended", async () => {
    const world = new FakeWorkflowWorld();
    const log: string[] = [];

    await expect(
      compensate(
        stepContext(world.dependencies(), log),
        [releaseStock, returnPayment],
        () => ({ status: "cancelled", reason: "cancelled by request" }),
        { claimId: "claim-1" },
      ),
    ).resolves.toEqual({ outcome: null, settlement: "none" });
    expect(log).toEqual(["check-claim"]);
    expect(world.emails).toEqual([]);
  });

  it("finish-unfulfilled: an order that is gone ends nowhere and nobody is e-mailed", async () => {
    const world = new FakeWorkflowWorld();
    const log: string[] = [];

    await expect(
      finishUnfulfilled(
        stepContext(world.dependencies(), log),
        { status: "cancelled", reason: "cancelled by request" },
        "none",
      ),
    ).resolves.toBeNull();
    expect(log).toEqual(["mark-cancelled"]);
    expect(world.emails).toEqual([]);
  });
});
