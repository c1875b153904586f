import { Inngest, type InngestFunction } from "inngest";
import { compileExpression } from "../../src/dev/inngest-engine/expressions";
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
  options: { exchangeShips?: "on_receipt" | "at_once"; started?: string[]; unwired?: boolean } = {},
) {
  const world = new FakeWorkflowWorld();
  const wired = returns.dependencies(options.exchangeShips);
  const started = options.started;
  if (started)
    wired.stalled = {
      markRunStarted: async (returnId: string) => {
        started.push(returnId);
      },
    } as unknown as NonNullable<typeof wired.stalled>;
  const fn = createProcessReturn(new Inngest({ id: "shop", isDev: true }), {
    ...world.dependencies(),
    ...(options.unwired ? {} : { returns: wired }),
  });
  const run = () =>
    runFunction(
      fn,
      { name: "shop/return.requested", data: { returnId: returns.returnId, orderId: returns.orderId } },
      { events },
    );
  return { world, run, fn };
}

/** What the SDK registers with Inngest for the function (the sync payload). */
function registeredConfig(fn: InngestFunction.Any) {
  const internals = fn as unknown as {
    getConfig(options: { baseUrl: URL; appPrefix: string }): Record<string, unknown>[];
  };
  return internals.getConfig({ baseUrl: new URL("http://localhost:3000/api/inngest"), appPrefix: "shop" });
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

describe("process-return (fast tier): what Inngest is told", () => {
  const requested = { data: { returnId: "ret-1", orderId: "order-1" } };

  it("runs once per return on shop/return.requested, retries 5 times, and a failure alerts ops", () => {
    const { fn } = setup(new FakeReturnWorld({ lines: [shirt] }));
    const [config, failureHandler] = registeredConfig(fn);
    expect(config).toMatchObject({
      id: "shop-process-return",
      name: "Process a return",
      triggers: [{ event: "shop/return.requested" }],
      steps: { step: { retries: { attempts: 5 } } },
    });
    expect(compileExpression(String(config?.idempotency)).key({ event: requested })).toBe("ret-1");
    expect(failureHandler).toMatchObject({ id: "shop-process-return-failure" });
  });

  it("is cancelled by this return's shop/return.cancelled, not another return's", () => {
    const { fn } = setup(new FakeReturnWorld({ lines: [shirt] }));
    const [config] = registeredConfig(fn);
    expect(config?.cancel).toEqual([
      { event: "shop/return.cancelled", if: "async.data.returnId == event.data.returnId" },
    ]);
    const [cancel] = config?.cancel as { if: string }[];
    const cancels = compileExpression(String(cancel?.if));
    expect(cancels.matches({ event: requested, async: { data: { returnId: "ret-1" } } })).toBe(true);
    expect(cancels.matches({ event: requested, async: { data: { returnId: "ret-2" } } })).toBe(false);
  });

  it("a run that fails for good tells ops which function, run and order, with the error", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.refuseExchangeParcel = true;
    const { world, run } = setup(returns);
    const outcome = await run();
    expect(outcome.status).toBe("failed");
    expect(world.runFailures).toEqual([
      {
        functionId: "shop-process-return",
        runId: outcome.runId,
        orderId: returns.orderId,
        error: { name: "Error", message: "EasyPost: 500 Internal Server Error" },
      },
    ]);
  });

  it("a deployment without returns wired fails the run at once, naming why, and touches nothing", async () => {
    const returns = new FakeReturnWorld({ lines: [shirt] });
    const outcome = await setup(returns, {}, { unwired: true }).run();
    expect(outcome.status).toBe("failed");
    if (outcome.status === "failed")
      expect(outcome.error.message).toBe("returns are not wired in this deployment");
    expect(outcome.steps).toEqual([]);
    expect(returns.effects).toEqual([]);
  });
});

describe("process-return (fast tier): the run's edges", () => {
  it("marks the return's run started once, at its first read, so the stalled-returns sweep leaves it alone", async () => {
    const returns = new FakeReturnWorld({ status: "requested", lines: [shirt] });
    const started: string[] = [];
    /** How many marks each read of the return found made before it. */
    const marksAtRead: number[] = [];
    returns.onRead = (row) => {
      marksAtRead.push(started.length);
      if (marksAtRead.length === 3 && row.status === "requested") row.status = "approved";
    };
    const outcome = await setup(returns, {}, { started }).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed" } });
    // Three approval reads, then the parcel's two: marked before the first read, never again.
    expect(stepIds(outcome)).toContain("check-approval-2");
    expect(stepIds(outcome)).toContain("check-parcel-1");
    expect(marksAtRead).toEqual([1, 1, 1, 1, 1]);
    expect(started).toEqual([returns.returnId]);
  });

  it("ended by ops as cancelled or closed while the parcel is awaited: the label goes back, the run ends so", async () => {
    for (const status of ["cancelled", "closed"] as const) {
      const returns = new FakeReturnWorld({ lines: [shirt] });
      returns.parcelArrives = false;
      returns.onRead = (row) => {
        if (row.label_sent_at) row.status = status;
      };
      const outcome = await setup(returns).run();
      expect(outcome).toMatchObject({ status: "completed", result: { outcome: status } });
      expect(stepIds(outcome).slice(-2)).toEqual(["check-parcel-0", "refund-return-label"]);
      expect(returns.effects).toEqual(["label", "label-email", "label-hand-back"]);
    }
  });

  it("a Checkout session Stripe answers without a URL: nothing is e-mailed, the payment is still awaited", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.chargeAnswer = "awaiting_payment";
    returns.checkoutUrl = null;
    const outcome = await setup(returns).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed" } });
    const ids = stepIds(outcome);
    expect(ids).not.toContain("email-exchange-checkout");
    expect(ids.slice(ids.indexOf("create-exchange-checkout"), ids.indexOf("ship-exchange"))).toEqual([
      "create-exchange-checkout",
      "check-exchange-payment-0",
      "wait-exchange-payment-0",
      "check-exchange-payment-1",
    ]);
    expect(returns.effects.some((effect) => effect.startsWith("checkout-email"))).toBe(false);
  });

  it("ended by ops as cancelled or closed while the page is open, or the page recorded expired: released, nothing closed unpaid", async () => {
    const cases = [
      { checkout: "ended" as const, endedAs: "cancelled" as const },
      { checkout: "ended" as const, endedAs: "closed" as const },
      { checkout: "expired" as const, endedAs: "rejected" as const },
    ];
    for (const { checkout, endedAs } of cases) {
      const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
      returns.chargeAnswer = "awaiting_payment";
      returns.checkout = checkout;
      returns.endedAs = endedAs;
      const outcome = await setup(returns).run();
      expect(outcome).toMatchObject({ status: "completed", result: { outcome: "ended" } });
      expect(stepIds(outcome).slice(-2)).toEqual(["check-exchange-payment-1", "release-exchange"]);
      expect(returns.effects).not.toContain("close-unpaid");
      expect(returns.effects).not.toContain("checkout-expire");
      expect(returns.stock.get("TEE-XL")).toBe(3);
    }
  });

  it("the exchange's charge finds the return ended (before or after charging): nothing reserved or shipped, the run ends", async () => {
    for (const ended of ["ended", "refunded"] as const) {
      const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
      returns.chargeEnded = ended;
      const outcome = await setup(returns).run();
      expect(outcome).toMatchObject({ status: "completed", result: { outcome: "ended" } });
      expect(stepIds(outcome).slice(-1)).toEqual(["charge-exchange-difference"]);
      expect(returns.effects).not.toContain("reserve");
      expect(returns.effects).not.toContain("close");
      expect(returns.stock.get("TEE-XL")).toBe(3);
    }
  });

  it("EXCHANGE_SHIPS=at_once and the return comes back: the exchange is charged, shipped and e-mailed once", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    const outcome = await setup(returns, {}, { exchangeShips: "at_once" }).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "closed" } });
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
      "refund-return",
      "restock-return",
      "close-return",
    ]);
    expect(returns.effects.filter((effect) => effect === "ship")).toHaveLength(1);
  });

  it("EXCHANGE_SHIPS=at_once and the bank refuses the difference: the run stops there, the parcel not awaited", async () => {
    const returns = new FakeReturnWorld({ lines: [dearer], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.chargeAnswer = "failed";
    const outcome = await setup(returns, {}, { exchangeShips: "at_once" }).run();
    expect(outcome).toMatchObject({ status: "completed", result: { outcome: "exchange-charge-failed" } });
    expect(stepIds(outcome).slice(-1)).toEqual(["charge-exchange-difference"]);
    expect(returns.effects).toEqual(["label", "label-email", "charge:500:failed"]);
  });

  it("an even exchange whose parcel cannot be booked: the items released, no charge to refund", async () => {
    const even = { ...shirt, exchangeSku: "TEE-XL", exchangeUnitPrice: 2500 };
    const returns = new FakeReturnWorld({ lines: [even], stock: { "TEE-M": 4, "TEE-XL": 3 } });
    returns.refuseExchangeParcel = true;
    const outcome = await setup(returns).run();
    expect(outcome.status).toBe("failed");
    expect(stepIds(outcome).slice(-3)).toEqual(["ship-exchange", "release-exchange", "exchange-failed"]);
    expect(returns.effects).not.toContain("charge-refund");
  });
});
