import { Inngest } from "inngest";
import { createProcessReturn, returnUndos } from "../../src/inngest/functions/process-return";
import { refundReturn } from "../../src/inngest/steps/refund-return";
import { FakeWorkflowWorld } from "../support/fakes/workflow";
import { FakeReturnWorld } from "../support/fakes/returns";
import { runFunction, type RunOutcome } from "../support/fakes/step-driver";

/**
 * The fast tier of process-return: its steps driven on an in-memory return (test/support/fakes/
 * returns.ts), no database or engine. It pins the step list of a plain return, a cheaper and a
 * dearer exchange (the ids are durable Inngest state), and the order the undos run in when the
 * exchange's parcel cannot be booked or the return never comes back
 * (test/workflow/returns.test.ts and exchange-charge.test.ts run the same paths end to end).
 */

function setup(returns: FakeReturnWorld, exchangeShips: "on_receipt" | "at_once" = "on_receipt") {
  const world = new FakeWorkflowWorld();
  const fn = createProcessReturn(new Inngest({ id: "shop", isDev: true }), {
    ...world.dependencies(),
    returns: returns.dependencies(exchangeShips),
  });
  const run = () =>
    runFunction(fn, {
      name: "shop/return.requested",
      data: { returnId: returns.returnId, orderId: returns.orderId },
    });
  return { world, run };
}

const stepIds = (run: RunOutcome) => run.steps.map((step) => step.id);

/** The label bought and e-mailed, then the parcel awaited until it is read as received. */
const labelAndParcel = [
  "check-approval-0",
  "create-return-label",
  "email-return-label",
  "check-parcel-0",
  "wait-parcel-0",
  "check-parcel-1",
];

const shirt = { sku: "TEE-M", quantity: 1, unitPrice: 2500 };

describe("process-return (fast tier)", () => {
  it("a plain return: label, e-mail, the parcel, refund, restock, close, in that order", async () => {
    const returns = new FakeReturnWorld({ lines: [shirt], stock: { "TEE-M": 4 } });
    const { world, run } = setup(returns);

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed", refunded: 2500 } });
    expect(stepIds(outcome)).toEqual([...labelAndParcel, "refund-return", "restock-return", "close-return"]);
    expect(returns.effects).toEqual(["label", "label-email", "refund:2500", "restock", "close"]);
    expect(returns.stock.get("TEE-M")).toBe(5);
    expect(world.runFailures).toEqual([]);
  });

  it("damaged goods are written off instead of restocked", async () => {
    const returns = new FakeReturnWorld({ lines: [shirt], stock: { "TEE-M": 4 } });
    returns.condition = "damaged";
    const { run } = setup(returns);

    const outcome = await run();

    expect(stepIds(outcome)).toEqual([
      ...labelAndParcel,
      "refund-return",
      "write-off-return",
      "close-return",
    ]);
    expect(returns.stock.get("TEE-M")).toBe(4);
    expect(returns.effects).toEqual(["label", "label-email", "refund:2500", "write-off", "close"]);
    expect(outcome.steps.find((step) => step.id === "write-off-return")?.detail).toBe(1);
  });

  it("a cheaper exchange: nothing charged, the difference in the one refund, the new item reserved, shipped and e-mailed", async () => {
    const returns = new FakeReturnWorld({
      lines: [{ ...shirt, exchangeSku: "TEE-S", exchangeUnitPrice: 2000 }],
      stock: { "TEE-M": 4, "TEE-S": 3 },
    });
    const { run } = setup(returns);

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed", refunded: 500 } });
    expect(stepIds(outcome)).toEqual([
      ...labelAndParcel,
      "refund-return",
      "restock-return",
      "charge-exchange-difference",
      "reserve-exchange",
      "ship-exchange",
      "email-exchange-tracking",
      "close-return",
    ]);
    expect(returns.effects).toEqual([
      "label",
      "label-email",
      "refund:500",
      "restock",
      "reserve",
      "ship",
      "exchange-email",
      "close",
    ]);
    expect(returns.row.exchange_charge_status).toBeNull();
    expect([returns.stock.get("TEE-M"), returns.stock.get("TEE-S")]).toEqual([5, 2]);
  });

  it("a dearer exchange: the difference charged once before anything is reserved, nothing refunded", async () => {
    const returns = new FakeReturnWorld({
      lines: [{ ...shirt, exchangeSku: "TEE-XL", exchangeUnitPrice: 3000 }],
      stock: { "TEE-M": 4, "TEE-XL": 3 },
    });
    const { run } = setup(returns);

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed", refunded: 0 } });
    expect(stepIds(outcome)).toEqual([
      ...labelAndParcel,
      "refund-return",
      "restock-return",
      "charge-exchange-difference",
      "reserve-exchange",
      "ship-exchange",
      "email-exchange-tracking",
      "close-return",
    ]);
    expect(returns.effects).toEqual([
      "label",
      "label-email",
      "refund:0",
      "restock",
      "charge:500:charged",
      "reserve",
      "ship",
      "exchange-email",
      "close",
    ]);
    expect(returns.stock.get("TEE-XL")).toBe(2);
  });

  it("a dearer exchange the bank refuses: nothing reserved or shipped, the return left open", async () => {
    const returns = new FakeReturnWorld({
      lines: [{ ...shirt, exchangeSku: "TEE-XL", exchangeUnitPrice: 3000 }],
      stock: { "TEE-M": 4, "TEE-XL": 3 },
    });
    returns.chargeAnswer = "failed";
    const { run } = setup(returns);

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "exchange-charge-failed" } });
    expect(stepIds(outcome).at(-1)).toBe("charge-exchange-difference");
    expect(returns.effects).not.toContain("reserve");
    expect(returns.row.status).toBe("received");
    expect(returns.stock.get("TEE-XL")).toBe(3);
  });

  it("the exchange's parcel cannot be booked: the stock released, then the charge refunded, then the failure told, and the run fails for ops", async () => {
    const returns = new FakeReturnWorld({
      lines: [{ ...shirt, exchangeSku: "TEE-XL", exchangeUnitPrice: 3000 }],
      stock: { "TEE-M": 4, "TEE-XL": 3 },
    });
    returns.refuseExchangeParcel = true;
    const { world, run } = setup(returns);

    const outcome = await run();

    expect(outcome.status).toBe("failed");
    // Every attempt of the booking made (retries: 5), then the undos newest first, once each.
    expect(outcome.steps.find((step) => step.id === "ship-exchange")?.detail).toBe(6);
    expect(stepIds(outcome).slice(-5)).toEqual([
      "reserve-exchange",
      "ship-exchange",
      "release-exchange",
      "refund-exchange-charge",
      "exchange-failed",
    ]);
    expect(returns.effects.slice(-3)).toEqual(["reserve", "release", "charge-refund"]);
    expect(returns.timeline).toEqual(["exchange-released", "exchange-charge-refunded", "exchange-failed"]);
    expect(returns.notices).toEqual(["exchange-failed"]);
    expect(returns.stock.get("TEE-XL")).toBe(3);
    expect(returns.row).toMatchObject({ status: "received", exchange_charge_status: "refunded" });
    // The return label was used (the parcel came back): it is not handed back.
    expect(returns.effects).not.toContain("label-hand-back");
    expect(world.runFailures).toMatchObject([
      { functionId: "shop-process-return", orderId: returns.orderId },
    ]);
  });

  it("EXCHANGE_SHIPS=at_once, the return never comes back: every undo runs newest first, only the unused label is handed back", async () => {
    const returns = new FakeReturnWorld({
      lines: [{ ...shirt, exchangeSku: "TEE-XL", exchangeUnitPrice: 3000 }],
      stock: { "TEE-M": 4, "TEE-XL": 3 },
    });
    returns.parcelArrives = false;
    const { run } = setup(returns, "at_once");

    const outcome = await run();

    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "expired" } });
    expect(stepIds(outcome)).toEqual([
      "check-approval-0",
      "create-return-label",
      "email-return-label",
      "charge-exchange-difference",
      "reserve-exchange",
      "ship-exchange",
      "email-exchange-tracking",
      "check-parcel-0",
      "wait-parcel-0",
      "check-parcel-1",
      "wait-parcel-1",
      "check-parcel-2",
      "wait-parcel-2",
      "check-parcel-3",
      "release-exchange",
      "refund-exchange-charge",
      "refund-return-label",
      "expire-return",
    ]);
    // The exchange shipped, so it keeps its stock and its charge; the label was never used.
    expect(returns.effects.slice(-2)).toEqual(["label-hand-back", "expire"]);
    expect(returns.row).toMatchObject({ status: "cancelled", exchange_charge_status: "charged" });
    expect(returns.stock.get("TEE-XL")).toBe(2);
  });

  it("the cancel cleanup's undos: the exchange's stock, then its charge, then the return label", () => {
    expect(returnUndos.map((undo) => undo.id)).toEqual([
      "release-exchange",
      "refund-exchange-charge",
      "refund-return-label",
    ]);
  });

  it("a return step run without its return, or where returns are not wired, fails and changes nothing", async () => {
    const returns = new FakeReturnWorld({ lines: [shirt], stock: { "TEE-M": 4 } });
    const world = new FakeWorkflowWorld();
    const step = { run: async (_id: string, work: () => unknown) => work() } as never;
    const base = { step, orderId: returns.orderId, runId: "run-1" };
    const wired = { ...world.dependencies(), returns: returns.dependencies() };
    const refusal = "process-return runs without its return or the returns' wiring";
    await expect(refundReturn.invoke({ ...base, deps: wired })).rejects.toThrow(refusal);
    await expect(
      refundReturn.invoke({ ...base, returnId: returns.returnId, deps: world.dependencies() }),
    ).rejects.toThrow(refusal);
    expect(returns.effects).toEqual([]);
    await expect(
      refundReturn.invoke({ ...base, returnId: returns.returnId, deps: wired }),
    ).resolves.toMatchObject({
      amount: 2500,
    });
    expect(returns.effects).toEqual(["refund:2500"]);
  });
});
