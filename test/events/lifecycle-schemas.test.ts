import * as contracts from "../../src/events/contracts";
import {
  isLifecycleEventName,
  lifecycleEvents,
  parseLifecycleEvent,
  type lifecycleOrderRefunded,
  type LifecycleEventData,
} from "../../src/events/lifecycle";

/**
 * The lifecycle events' contract (issue 40): versioned names, apart from the workflow's own
 * commands, and data checked against each schema.
 */
describe("lifecycle event schemas", () => {
  const orderId = "7f1f9a36-5a53-4a1b-9d0b-3c2f7f6f5d11";
  const at = "2026-12-06T20:00:00.000Z";

  it("covers every fact the issue names, each with a .v1 suffix", () => {
    expect(Object.keys(lifecycleEvents).sort()).toEqual(
      [
        "shop/order.paid.v1",
        "shop/order.fulfilment-held.v1",
        "shop/order.fulfilment-released.v1",
        "shop/order.shipped.v1",
        "shop/order.delivered.v1",
        "shop/order.cancelled.v1",
        "shop/order.refunded.v1",
        "shop/order.failed.v1",
        "shop/return.requested.v1",
        "shop/return.received.v1",
        "shop/return.refunded.v1",
        "shop/stock.low.v1",
      ].sort(),
    );
  });

  it("shares no name with a workflow command, so no function of ours is triggered by one", () => {
    const commandNames = Object.values(contracts as Record<string, unknown>).flatMap((value) =>
      typeof value === "object" && value !== null && "name" in value ? [String(value.name)] : [],
    );
    expect(commandNames).toContain("shop/order.cancelled");
    for (const name of commandNames) expect(isLifecycleEventName(name)).toBe(false);
  });

  it("accepts a refund with its source, and refuses an unknown source or a zero amount", () => {
    const refund: LifecycleEventData<typeof lifecycleOrderRefunded.name> = {
      orderId,
      occurredAt: at,
      refundId: "re_123",
      amount: 700,
      currency: "usd",
      source: "stripe-dashboard",
    };
    expect(parseLifecycleEvent("shop/order.refunded.v1", refund).data).toEqual(refund);
    expect(() => parseLifecycleEvent("shop/order.refunded.v1", { ...refund, source: "cash" })).toThrow(
      /source/,
    );
    expect(() => parseLifecycleEvent("shop/order.refunded.v1", { ...refund, amount: 0 })).toThrow(/amount/);
  });

  it("refuses a name that is not a lifecycle event, and data without its order id", () => {
    expect(() => parseLifecycleEvent("shop/order.placed", { orderId })).toThrow(/not a lifecycle event/);
    expect(() => parseLifecycleEvent("shop/order.delivered.v1", { occurredAt: at })).toThrow(/orderId/);
  });
});
