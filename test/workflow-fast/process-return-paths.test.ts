import { Inngest } from "inngest";
import { createProcessReturn } from "../../src/inngest/functions/process-return";
import { FakeWorkflowWorld } from "../support/fakes/workflow";
import { FakeReturnWorld } from "../support/fakes/returns";
import { runFunction, type RunOutcome } from "../support/fakes/step-driver";

/**
 * process-return's other paths on the step driver (the fast tier, beside process-return.test.ts):
 * ops' approval awaited, a return ended or received before its label, ops ending it while the
 * parcel is awaited, and a dearer exchange's difference paid (or not) on a Checkout page.
 */

const shirt = { sku: "TEE-M", quantity: 1, unitPrice: 2500 };
const dearer = { ...shirt, exchangeSku: "TEE-XL", exchangeUnitPrice: 3000 };

function setup(
  returns: FakeReturnWorld,
  events: Record<string, { name: string; data: Record<string, unknown> }> = {},
) {
  const world = new FakeWorkflowWorld();
  const fn = createProcessReturn(new Inngest({ id: "shop", isDev: true }), {
    ...world.dependencies(),
    returns: returns.dependencies(),
  });
  const run = () =>
    runFunction(
      fn,
      { name: "shop/return.requested", data: { returnId: returns.returnId, orderId: returns.orderId } },
      { events },
    );
  return { world, run };
}

const stepIds = (run: RunOutcome) => run.steps.map((step) => step.id);

describe("process-return's other paths (fast tier)", () => {
  it("a return ops never approve: read each slice, then expired", async () => {
    const returns = new FakeReturnWorld({ status: "requested", lines: [shirt] });
    const { run } = setup(returns);
    const outcome = await run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "not-approved" } });
    expect(stepIds(outcome)).toEqual([
      "check-approval-0",
      "wait-approval-0",
      "check-approval-1",
      "wait-approval-1",
      "check-approval-2",
      "wait-approval-2",
      "check-approval-3",
      "expire-return",
    ]);
    const wait = outcome.steps.find((step) => step.id === "wait-approval-0");
    expect(wait?.detail).toEqual({
      event: "shop/return.approved",
      timeout: "1d",
      if: "async.data.returnId == event.data.returnId",
    });
    expect(returns.effects).toEqual(["expire"]);
    expect(returns.row.status).toBe("cancelled");
  });

  it("approved by ops while it waits: the label follows", async () => {
    const returns = new FakeReturnWorld({ status: "requested", lines: [shirt] });
    let reads = 0;
    returns.onRead = (row) => {
      reads += 1;
      if (reads === 2 && row.status === "requested") row.status = "approved";
    };
    const { run } = setup(returns, {
      "wait-approval-0": { name: "shop/return.approved", data: { returnId: returns.returnId } },
    });
    const outcome = await run();
    expect(stepIds(outcome).slice(0, 4)).toEqual([
      "check-approval-0",
      "wait-approval-0",
      "check-approval-1",
      "create-return-label",
    ]);
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed" } });
  });

  it("rejected, cancelled or closed before anything: nothing done", async () => {
    for (const status of ["rejected", "cancelled", "closed"] as const) {
      const returns = new FakeReturnWorld({ status, lines: [shirt] });
      const outcome = await setup(returns).run();
      expect(outcome).toMatchObject({
        status: "completed",
        result: { returnId: returns.returnId, outcome: status },
      });
      expect(stepIds(outcome)).toEqual(["check-approval-0"]);
      expect(returns.effects).toEqual([]);
    }
  });

  it("received by hand before the label: refunded, restocked and closed, no label", async () => {
    const returns = new FakeReturnWorld({ status: "received", lines: [shirt], stock: { "TEE-M": 1 } });
    returns.row.condition = "resellable";
    const outcome = await setup(returns).run();
    expect(stepIds(outcome)).toEqual(["check-approval-0", "refund-return", "restock-return", "close-return"]);
    expect(outcome).toMatchObject({
      result: { returnId: returns.returnId, outcome: "closed", refunded: 2500, condition: "resellable" },
    });
  });

  it("ended by ops while the parcel is awaited: the label goes back, nothing expires", async () => {
    const returns = new FakeReturnWorld({ lines: [shirt] });
    returns.parcelArrives = false;
    returns.onRead = (row) => {
      if (row.label_sent_at) row.status = "rejected";
    };
    const outcome = await setup(returns).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "rejected" } });
    expect(stepIds(outcome).slice(-2)).toEqual(["check-parcel-0", "refund-return-label"]);
    expect(returns.effects).toEqual(["label", "label-email", "label-hand-back"]);
  });

  it("a dearer exchange the bank wants the customer present for, paid on the Checkout page: it ships", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.chargeAnswer = "awaiting_payment";
    const outcome = await setup(returns).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed" } });
    const ids = stepIds(outcome);
    expect(ids.slice(ids.indexOf("charge-exchange-difference"))).toEqual([
      "charge-exchange-difference",
      "reserve-exchange",
      "create-exchange-checkout",
      "email-exchange-checkout",
      "check-exchange-payment-0",
      "wait-exchange-payment-0",
      "check-exchange-payment-1",
      "ship-exchange",
      "email-exchange-tracking",
      "close-return",
    ]);
    expect(outcome.steps.find((step) => step.id === "wait-exchange-payment-0")?.detail).toEqual({
      event: "shop/exchange.paid",
      timeout: "1d",
      if: "async.data.returnId == event.data.returnId",
    });
    expect(returns.effects).toContain("checkout-email:https://checkout.example/cs_1");
    // Reserved once, before the page: not again once paid.
    expect(returns.effects.filter((effect) => effect === "reserve")).toHaveLength(1);
    expect(returns.stock.get("TEE-XL")).toBe(2);
  });

  it("never paid: the page expired, the items released, the exchange closed unpaid", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.chargeAnswer = "awaiting_payment";
    returns.checkout = "never";
    const outcome = await setup(returns).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "exchange-unpaid" } });
    expect(stepIds(outcome).slice(-6)).toEqual([
      "check-exchange-payment-0",
      "wait-exchange-payment-0",
      "check-exchange-payment-1",
      "expire-exchange-checkout",
      "release-exchange",
      "close-unpaid-exchange",
    ]);
    expect(returns.effects.slice(-3)).toEqual(["checkout-expire", "release", "close-unpaid"]);
    expect(returns.stock.get("TEE-XL")).toBe(3);
  });

  it("ended by ops while the page is open: the items released, nothing closed unpaid", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.chargeAnswer = "awaiting_payment";
    returns.checkout = "ended";
    const outcome = await setup(returns).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "ended" } });
    expect(stepIds(outcome).slice(-2)).toEqual(["check-exchange-payment-1", "release-exchange"]);
    expect(returns.effects).not.toContain("close-unpaid");
    expect(returns.stock.get("TEE-XL")).toBe(3);
  });

  it("paid on the page, then the parcel cannot be booked: the items released and that payment refunded", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.chargeAnswer = "awaiting_payment";
    returns.refuseExchangeParcel = true;
    const outcome = await setup(returns).run();
    expect(outcome.status).toBe("failed");
    expect(stepIds(outcome).slice(-4)).toEqual([
      "ship-exchange",
      "release-exchange",
      "refund-exchange-charge",
      "exchange-failed",
    ]);
    expect(returns.row.exchange_charge_status).toBe("refunded");
  });
});
