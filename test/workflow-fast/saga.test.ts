import { fulfilmentSteps, fulfilmentUndos } from "../../src/inngest/functions/fulfill-order";
import type { StepContext } from "../../src/inngest/steps/context";
import { liftHold } from "../../src/inngest/steps/hold-fulfilment";
import { releaseStock } from "../../src/inngest/steps/release-stock";
import { returnPayment } from "../../src/inngest/steps/return-payment";
import {
  createStep,
  defineUndo,
  runUndos,
  Saga,
  undosOf,
  UndoResults,
  type Undo,
} from "../../src/inngest/steps/saga";
import type { PaymentSettlement } from "../../src/notifications/customer-messages";
import { FakeWorkflowWorld } from "../support/fakes/workflow";

/**
 * Each step with its undo (src/inngest/steps/saga.ts): the compensation is derived from the steps
 * that ran (a Saga) or from the workflow's list of steps (undosOf), newest first, and each undo's
 * result is read back by the undo itself, typed.
 */

/** A context whose step tools run each step body at once and log the step's id. */
function context(log: string[]): StepContext {
  const step = {
    run: async (id: string, body: () => Promise<unknown>) => {
      log.push(id);
      return body();
    },
  };
  return {
    step: step as unknown as StepContext["step"],
    deps: new FakeWorkflowWorld().dependencies(),
    orderId: "00000000-0000-4000-8000-000000000001",
    runId: "run-1",
  };
}

const loggedUndo = <R>(id: string, result: R): Undo<R> =>
  defineUndo(id, (ctx) => ctx.step.run(id, async () => result) as Promise<R>);

describe("fulfill-order's steps and their undos", () => {
  it("keeps the forward steps' ids, which are durable Inngest state, in the order the workflow runs them", () => {
    expect(fulfilmentSteps.map((step) => step.id)).toEqual([
      "claim",
      "reserve-stock",
      "end-fulfilment-hold",
      "charge-card",
      "send-short-notice",
      "check-address",
      "await-hold-release",
      "create-shipment",
      "send-confirmation",
      "mark-delivered",
      "send-review-request",
    ]);
  });

  it("pairs the claim with return-payment, reserve-stock with release-stock, the holds with lift-hold, and nothing else with an undo", () => {
    expect(fulfilmentSteps.map((step) => [step.id, step.undo?.id ?? null])).toEqual([
      ["claim", "return-payment"],
      ["reserve-stock", "release-stock"],
      ["end-fulfilment-hold", "lift-hold"],
      ["charge-card", null],
      ["send-short-notice", null],
      ["check-address", null],
      ["await-hold-release", "lift-hold"],
      ["create-shipment", null],
      ["send-confirmation", null],
      ["mark-delivered", null],
      ["send-review-request", null],
    ]);
  });

  it("derives the whole compensation from the list of steps: the hold lifted, the stock back, then the money", () => {
    expect(fulfilmentUndos).toEqual([liftHold, releaseStock, returnPayment]);
  });
});

describe("Saga", () => {
  const first = loggedUndo("undo-first", "first done");
  const second = loggedUndo("undo-second", 2);
  const stepOwing = <Out>(id: string, undo: Undo<unknown>, owesUndo?: (out: Out) => boolean) =>
    createStep({
      id,
      invoke: (ctx, out: Out) => ctx.step.run(id, async () => out) as Promise<Out>,
      undo,
      ...(owesUndo ? { owesUndo } : {}),
    });

  it("runs a step with its arguments and answers its outcome", async () => {
    const log: string[] = [];
    const saga = new Saga(context(log));
    const outcome = await saga.run(stepOwing("forward", first), { ok: true });
    expect(outcome).toEqual({ ok: true });
    expect(log).toEqual(["forward"]);
  });

  it("owes a step's undo once its outcome says so, newest first", async () => {
    const saga = new Saga(context([]));
    expect(saga.owed).toEqual([]);
    await saga.run(stepOwing("a", first), "done");
    await saga.run(stepOwing("b", second), "done");
    expect(saga.owed).toEqual([second, first]);
  });

  it("owes nothing for an outcome that left nothing to undo", async () => {
    const saga = new Saga(context([]));
    await saga.run(
      stepOwing("a", first, (out: { ok: boolean }) => out.ok),
      { ok: false },
    );
    expect(saga.owed).toEqual([]);
    await saga.run(
      stepOwing("a", first, (out: { ok: boolean }) => out.ok),
      { ok: true },
    );
    expect(saga.owed).toEqual([first]);
  });

  it("owes a step without an undo nothing, and the same undo only once", async () => {
    const saga = new Saga(context([]));
    await saga.run(createStep({ id: "e-mail", invoke: async () => "sent" }));
    expect(saga.owed).toEqual([]);
    await saga.run(stepOwing("a", first), 1);
    await saga.run(stepOwing("b", first), 2);
    expect(saga.owed).toEqual([first]);
  });

  it("hands out a copy: what it owes changes only by running steps", async () => {
    const saga = new Saga(context([]));
    await saga.run(stepOwing("a", first), 1);
    (saga.owed as Undo<unknown>[]).push(second);
    expect(saga.owed).toEqual([first]);
  });
});

describe("undosOf and runUndos", () => {
  const first = loggedUndo("undo-first", "first done");
  const second = loggedUndo("undo-second", 2);

  it("lists each undo of a list of steps once, the last step's first", () => {
    const steps = [
      createStep({ id: "a", invoke: async () => 1, undo: first }),
      createStep({ id: "b", invoke: async () => 1 }),
      createStep({ id: "c", invoke: async () => 1, undo: second }),
      createStep({ id: "d", invoke: async () => 1, undo: first }),
    ];
    expect(undosOf(steps)).toEqual([second, first]);
    expect(undosOf([])).toEqual([]);
  });

  it("runs the undos in the order given, each once, and reads each one's result back by the undo", async () => {
    const log: string[] = [];
    const results = await runUndos(context(log), [second, first]);
    expect(log).toEqual(["undo-second", "undo-first"]);
    expect(results.of(first)).toBe("first done");
    expect(results.of(second)).toBe(2);
    expect(results.of(loggedUndo("never-owed", true))).toBeUndefined();
  });

  it("types each result as its undo's: return-payment's is a settlement", () => {
    const results = new UndoResults();
    results.record(returnPayment, "voided");
    const settlement: PaymentSettlement | undefined = results.of(returnPayment);
    expect(settlement).toBe("voided");
    // @ts-expect-error: return-payment reports a settlement, not released stock lines.
    results.record(returnPayment, [{ sku: "MUG", quantity: 1 }]);
  });
});
