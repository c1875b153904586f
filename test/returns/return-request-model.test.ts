import {
  customerRules,
  decideReturnRequest,
  orderStatuses,
  type ReturnRequestFacts,
} from "../../src/shared/order-model";

const day = 24 * 3600_000;

/**
 * A return request asks the model (issue 37), as approve, reject, receive and close do: the
 * order's status, its parcels' delivery and RETURN_WINDOW decide, with today's refusal codes, and
 * src/returns/records/request.ts asks it under the order's row lock (the fence).
 */
describe("the return request in the order model", () => {
  const deliveredAt = new Date("2026-12-01T00:00:00Z");
  const delivered: ReturnRequestFacts = {
    status: "delivered",
    deliveredAt,
    undelivered: 0,
    now: new Date("2026-12-05T00:00:00Z"),
    windowMs: 30 * day,
  };

  it("allows a request in exactly the statuses the customer's page offers it, every parcel delivered, inside the window", () => {
    const allowed = orderStatuses.filter((status) => decideReturnRequest({ ...delivered, status }).allowed);
    expect(allowed).toEqual([...customerRules["ask for a return"].statuses]);
    for (const status of orderStatuses.filter((s) => !allowed.includes(s))) {
      expect(decideReturnRequest({ ...delivered, status })).toMatchObject({
        allowed: false,
        code: "order_not_returnable",
      });
    }
  });

  it("refuses a parcel not delivered yet (order_not_returnable) and a closed window (return_window_closed)", () => {
    expect(decideReturnRequest({ ...delivered, undelivered: 1 })).toMatchObject({
      allowed: false,
      code: "order_not_returnable",
    });
    expect(decideReturnRequest({ ...delivered, deliveredAt: null })).toMatchObject({
      allowed: false,
      code: "order_not_returnable",
    });
    expect(decideReturnRequest({ ...delivered, now: new Date("2027-01-01T00:00:00Z") })).toMatchObject({
      allowed: false,
      code: "return_window_closed",
    });
    // The window's last instant still counts.
    expect(decideReturnRequest({ ...delivered, now: new Date(deliveredAt.getTime() + 30 * day) })).toEqual({
      allowed: true,
    });
  });
});
