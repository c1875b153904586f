import { AppError } from "../../src/errors";
import type { ReturnRecords, ReturnRow } from "../../src/returns/return-records";
import {
  createReturnActions,
  isReturnRefusal,
  toReturnView,
  type ReturnActionsDeps,
} from "../../src/returns/returns";
import type { Timeline } from "../../src/timeline/timeline";
import { FakeReturnDesk } from "../support/fakes/returns";

/**
 * The return's use cases (src/returns/returns.ts) over in-memory ports (test/support/fakes/returns.ts's
 * FakeReturnDesk): what each refuses and with which code (changing nothing), the move it writes,
 * the timeline entry, the event it publishes under the return's id, and the request cancelled when
 * its event cannot be published. The records' SQL is the `returns` group's (a real database).
 */

const day = 24 * 3600_000;
const shirt = { sku: "TEE-M", quantity: 1 };

function setup(options: { approval?: "auto" | "ops"; desk?: FakeReturnDesk; now?: number } = {}) {
  const desk = options.desk ?? new FakeReturnDesk();
  const deps: ReturnActionsDeps = {
    records: desk.records() as unknown as ReturnRecords,
    publisher: desk.publisher() as ReturnActionsDeps["publisher"],
    timeline: desk.timeline() as unknown as Pick<Timeline, "record">,
    windowMs: 30 * day,
    approval: options.approval ?? "auto",
    now: () => options.now ?? Date.parse("2026-12-07T10:00:00.000Z"),
    listForOrder: async (orderId) =>
      [...desk.rows.values()].filter((row) => row.order_id === orderId).reverse(),
  };
  return { desk, actions: createReturnActions(deps) };
}

/** The AppError `act` was refused with (fails the test when it was not refused). */
async function refusal(act: Promise<unknown>): Promise<AppError> {
  const error = await act.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

/** What a refusal must leave: no write beyond the one tried, no entry, no event. */
function expectNothingChanged(desk: FakeReturnDesk, returnId: string, status: ReturnRow["status"]) {
  expect(desk.statusOf(returnId)).toBe(status);
  expect(desk.entries).toEqual([]);
  expect(desk.published).toEqual([]);
}

describe("request", () => {
  it("records the request as asked, approved at once (RETURN_APPROVAL=auto), and starts its run under the return's id", async () => {
    const { desk, actions } = setup({ now: Date.parse("2026-12-07T10:00:00.000Z") });

    const view = await actions.request({
      orderId: "00000000-0000-4000-8000-0000000000bb",
      lines: [{ sku: "TEE-M", quantity: 2, exchangeSku: "TEE-S" }],
      reason: "too_small",
      note: "a size down please",
      by: "customer",
    });

    expect(desk.created).toEqual([
      {
        orderId: "00000000-0000-4000-8000-0000000000bb",
        lines: [{ sku: "TEE-M", quantity: 2, exchangeSku: "TEE-S" }],
        reason: "too_small",
        note: "a size down please",
        requestedBy: "customer",
        approved: true,
        windowMs: 30 * day,
        now: new Date("2026-12-07T10:00:00.000Z"),
      },
    ]);
    expect(view).toMatchObject({
      status: "approved",
      orderId: "00000000-0000-4000-8000-0000000000bb",
      reason: "too_small",
      note: "a size down please",
      requestedBy: "customer",
    });
    expect(desk.published).toEqual([
      {
        name: "shop/return.requested",
        id: `return-requested-${view.returnId}`,
        data: { returnId: view.returnId, orderId: "00000000-0000-4000-8000-0000000000bb" },
      },
    ]);
    expect(desk.transitions).toEqual([]);
  });

  it("holds a customer's request for ops under RETURN_APPROVAL=ops; ops' own and the admin API's are approved", async () => {
    const { desk, actions } = setup({ approval: "ops" });

    const customers = await actions.request({ orderId: "o-1", lines: [shirt], reason: "r", by: "customer" });
    const ops = await actions.request({ orderId: "o-1", lines: [shirt], reason: "r", by: "ops-console" });
    const api = await actions.request({ orderId: "o-1", lines: [shirt], reason: "r", by: "admin-api" });

    expect(desk.created.map((asked) => asked.approved)).toEqual([false, true, true]);
    expect([customers.status, ops.status, api.status]).toEqual(["requested", "approved", "approved"]);
    expect(desk.published.map((event) => event.id)).toEqual([
      `return-requested-${customers.returnId}`,
      `return-requested-${ops.returnId}`,
      `return-requested-${api.returnId}`,
    ]);
  });

  it("refuses a request with no line (return_line_invalid), recording and publishing nothing", async () => {
    const { desk, actions } = setup();

    const error = await refusal(actions.request({ orderId: "o-1", lines: [], reason: "r", by: "customer" }));

    expect(error.code).toBe("return_line_invalid");
    // Shown on the customer's page as it is: it says what to do.
    expect(error.message).toMatch(/line/);
    expect(isReturnRefusal(error)).toBe(true);
    expect(desk.created).toEqual([]);
    expect(desk.rows.size).toBe(0);
    expect(desk.published).toEqual([]);
  });

  it("passes the records' refusal on as it is, publishing nothing", async () => {
    const { desk, actions } = setup();
    desk.refuseCreate = new AppError("return_window_closed", "The return window closed");

    const error = await refusal(
      actions.request({ orderId: "o-1", lines: [shirt], reason: "r", by: "customer" }),
    );

    expect(error).toBe(desk.refuseCreate);
    expect(desk.published).toEqual([]);
    expect(desk.transitions).toEqual([]);
  });

  it("cancels the return when its event cannot be published (no run would handle it) and answers upstream_unavailable", async () => {
    for (const approval of ["auto", "ops"] as const) {
      const { desk, actions } = setup({ approval });
      const down = new Error("Inngest: fetch failed");
      desk.publishError = down;

      const error = await refusal(
        actions.request({ orderId: "o-1", lines: [shirt], reason: "r", by: "customer" }),
      );

      expect(error.code).toBe("upstream_unavailable");
      // The customer is told to ask again (the cancelled return no longer holds its lines).
      expect(error.message).toMatch(/try again/);
      expect(error.httpStatus).toBe(502);
      expect(error.cause).toBe(down);
      expect(isReturnRefusal(error)).toBe(false);
      const [row] = [...desk.rows.values()];
      const returnId = row?.id ?? "none recorded";
      expect(desk.statusOf(returnId)).toBe("cancelled");
      expect(desk.transitions).toEqual([
        {
          returnId,
          from: ["requested", "approved"],
          to: "cancelled",
          fields: { note: "could not be started" },
        },
      ]);
    }
  });
});

describe("approve", () => {
  it("moves a requested return to approved, writes its entry and tells the waiting run under the return's id", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "requested" });

    const view = await actions.approve({ returnId: row.id, by: "ops-console", note: "fine" });

    expect(view.status).toBe("approved");
    expect(desk.statusOf(row.id)).toBe("approved");
    expect(desk.transitions).toEqual([
      {
        returnId: row.id,
        from: ["requested"],
        to: "approved",
        fields: { returnId: row.id, by: "ops-console", note: "fine" },
      },
    ]);
    expect(desk.entries).toEqual([
      {
        orderId: row.order_id,
        kind: "return-approved",
        detail: { returnId: row.id, by: "ops-console" },
        via: "timeline",
      },
    ]);
    expect(desk.published).toEqual([
      {
        name: "shop/return.approved",
        id: `return-approved-${row.id}`,
        data: { returnId: row.id, orderId: row.order_id },
      },
    ]);
  });

  it("refuses a return that does not exist (return_not_found, 404)", async () => {
    const { desk, actions } = setup();

    const error = await refusal(
      actions.approve({ returnId: "00000000-0000-4000-8000-00000000dead", by: "ops-console" }),
    );

    expect(error.code).toBe("return_not_found");
    expect(error.httpStatus).toBe(404);
    expect(error.message).toContain("00000000-0000-4000-8000-00000000dead");
    expect(desk.transitions).toEqual([]);
    expect(desk.published).toEqual([]);
  });

  it("refuses one already approved (return_not_actionable, with its status), trying no write", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "approved" });

    const error = await refusal(actions.approve({ returnId: row.id, by: "ops-console" }));

    expect(error.code).toBe("return_not_actionable");
    expect(error.httpStatus).toBe(409);
    expect(error.details).toEqual({ status: "approved" });
    expect(error.message).toBe(`Return ${row.id}: it is approved: it cannot be approved`);
    expect(desk.transitions).toEqual([]);
    expectNothingChanged(desk, row.id, "approved");
  });

  it("answers what the return is now when someone moved it between the read and the write", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "requested" });
    desk.beforeTransition = (stored) => {
      stored.status = "cancelled";
    };

    const error = await refusal(actions.approve({ returnId: row.id, by: "ops-console" }));

    expect(error.code).toBe("return_not_actionable");
    expect(error.details).toEqual({ status: "cancelled" });
    expect(error.message).toBe(`Return ${row.id}: it is cancelled: it cannot be approved`);
    expectNothingChanged(desk, row.id, "cancelled");
  });

  it("says to ask again when the write missed but the return, read again, could still be approved", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "requested" });
    desk.missNextTransition = true;

    const error = await refusal(actions.approve({ returnId: row.id, by: "ops-console" }));

    expect(error.code).toBe("return_not_actionable");
    expect(error.message).toBe(`Return ${row.id} changed meanwhile: ask again`);
    expect(error.details).toEqual({ status: "requested" });
    expectNothingChanged(desk, row.id, "requested");
  });
});

describe("reject", () => {
  it("moves the return to rejected with ops' note, on the timeline and in the cancel event under the return's id", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "received", received_at: new Date("2026-12-06T00:00:00Z") });

    const view = await actions.reject({ returnId: row.id, by: "ops-console", note: "not ours" });

    expect(view.status).toBe("rejected");
    expect(desk.transitions).toEqual([
      {
        returnId: row.id,
        from: ["requested", "approved", "received"],
        to: "rejected",
        fields: { returnId: row.id, by: "ops-console", note: "not ours" },
      },
    ]);
    expect(desk.entries).toEqual([
      {
        orderId: row.order_id,
        kind: "return-rejected",
        detail: { returnId: row.id, by: "ops-console", note: "not ours" },
        via: "timeline",
      },
    ]);
    expect(desk.published).toEqual([
      {
        name: "shop/return.cancelled",
        id: `return-cancelled-${row.id}`,
        data: { returnId: row.id, orderId: row.order_id, reason: "not ours" },
      },
    ]);
  });

  it("without a note: the entry's note is null and the event's reason is `rejected`", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "requested" });

    await actions.reject({ returnId: row.id, by: "ops-console" });

    expect(desk.entries[0]?.detail).toEqual({ returnId: row.id, by: "ops-console", note: null });
    expect(desk.published[0]?.data).toEqual({ returnId: row.id, orderId: row.order_id, reason: "rejected" });
  });

  it("refuses a refunded return (the money is back: nothing left to reject), trying no write", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "received", refunded_at: new Date("2026-12-06T00:00:00Z") });

    const error = await refusal(actions.reject({ returnId: row.id, by: "ops-console" }));

    expect(error.code).toBe("return_not_actionable");
    expect(error.message).toBe(`Return ${row.id}: it is received and refunded: it cannot be rejected`);
    expect(desk.transitions).toEqual([]);
    expectNothingChanged(desk, row.id, "received");
  });

  it("refuses a missing return (404) and a race lost to a close, changing nothing", async () => {
    const { desk, actions } = setup();
    expect((await refusal(actions.reject({ returnId: "nope", by: "ops-console" }))).code).toBe(
      "return_not_found",
    );

    const row = desk.put({ status: "approved" });
    desk.beforeTransition = (stored) => {
      stored.status = "closed";
    };
    const error = await refusal(actions.reject({ returnId: row.id, by: "ops-console", note: "n" }));
    expect(error.code).toBe("return_not_actionable");
    expect(error.details).toEqual({ status: "closed" });
    expectNothingChanged(desk, row.id, "closed");
  });
});

describe("close", () => {
  it("ends an approved return whose parcel is not coming: entry with the note, cancel event under the return's id", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "approved" });

    const view = await actions.close({ returnId: row.id, by: "ops-console", note: "customer kept it" });

    expect(view.status).toBe("closed");
    expect(desk.transitions[0]).toMatchObject({ from: ["requested", "approved"], to: "closed" });
    expect(desk.entries).toEqual([
      {
        orderId: row.order_id,
        kind: "return-closed",
        detail: { returnId: row.id, by: "ops-console", note: "customer kept it" },
        via: "timeline",
      },
    ]);
    expect(desk.published).toEqual([
      {
        name: "shop/return.cancelled",
        id: `return-cancelled-${row.id}`,
        data: { returnId: row.id, orderId: row.order_id, reason: "customer kept it" },
      },
    ]);
  });

  it("without a note: the entry's note is null and the event's reason is `closed`", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "requested" });

    await actions.close({ returnId: row.id, by: "ops-console" });

    expect(desk.entries[0]?.detail).toEqual({ returnId: row.id, by: "ops-console", note: null });
    expect(desk.published[0]?.data).toEqual({ returnId: row.id, orderId: row.order_id, reason: "closed" });
  });

  it("ends a received return whose exchange charge the bank refused (ops' to end); refuses a plain received one", async () => {
    const { desk, actions } = setup();
    const refused = desk.put({ status: "received", exchange_charge_status: "failed" });
    const plain = desk.put({ status: "received" });

    expect((await actions.close({ returnId: refused.id, by: "ops-console" })).status).toBe("closed");
    expect(desk.transitions[0]?.from).toEqual(["requested", "approved", "received"]);

    desk.entries.length = 0;
    desk.published.length = 0;
    const error = await refusal(actions.close({ returnId: plain.id, by: "ops-console" }));
    expect(error.code).toBe("return_not_actionable");
    expect(error.message).toBe(`Return ${plain.id}: it is received: it cannot be closed`);
    expect(desk.transitions).toHaveLength(1);
    expectNothingChanged(desk, plain.id, "received");
  });

  it("refuses a missing return (404) and a race lost to a rejection, changing nothing", async () => {
    const { desk, actions } = setup();
    expect((await refusal(actions.close({ returnId: "nope", by: "ops-console" }))).code).toBe(
      "return_not_found",
    );

    const row = desk.put({ status: "approved" });
    desk.beforeTransition = (stored) => {
      stored.status = "rejected";
    };
    const error = await refusal(actions.close({ returnId: row.id, by: "ops-console" }));
    expect(error.details).toEqual({ status: "rejected" });
    expectNothingChanged(desk, row.id, "rejected");
  });
});

describe("receive", () => {
  it("ops receive a parcel: moved with its condition, the entry written by the move itself, the event with the condition", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "approved" });

    const view = await actions.receive({
      returnId: row.id,
      by: "ops-console",
      condition: "damaged",
      note: "torn",
    });

    expect(view).toMatchObject({
      status: "received",
      condition: "damaged",
      receivedAt: desk.clock.toISOString(),
    });
    expect(desk.transitions).toEqual([
      {
        returnId: row.id,
        from: ["requested", "approved"],
        to: "received",
        fields: {
          returnId: row.id,
          by: "ops-console",
          condition: "damaged",
          note: "torn",
          entry: {
            kind: "return-received",
            detail: { returnId: row.id, by: "ops-console", condition: "damaged" },
          },
        },
      },
    ]);
    expect(desk.entries).toEqual([
      {
        orderId: row.order_id,
        kind: "return-received",
        detail: { returnId: row.id, by: "ops-console", condition: "damaged" },
        via: "transition",
      },
    ]);
    expect(desk.published).toEqual([
      {
        name: "shop/return.received",
        id: `return-received-${row.id}`,
        data: { returnId: row.id, orderId: row.order_id, condition: "damaged" },
      },
    ]);
  });

  it("the carrier repeating its delivery: the same event again (Inngest drops it), nothing written, the return answered", async () => {
    const { desk, actions } = setup();
    const row = desk.put({
      status: "received",
      condition: "damaged",
      received_at: new Date("2026-12-06T00:00:00Z"),
    });

    const view = await actions.receive({ returnId: row.id, by: "carrier", condition: "resellable" });

    expect(view).toMatchObject({ status: "received", condition: "damaged" });
    expect(desk.transitions).toEqual([]);
    expect(desk.entries).toEqual([]);
    expect(desk.published).toEqual([
      {
        name: "shop/return.received",
        id: `return-received-${row.id}`,
        data: { returnId: row.id, orderId: row.order_id, condition: "damaged" },
      },
    ]);
  });

  it("a repeat for a received return with no condition recorded announces it resellable", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "received", received_at: new Date("2026-12-06T00:00:00Z") });

    await actions.receive({ returnId: row.id, by: "carrier", condition: "damaged" });

    expect(desk.published.map((event) => event.data)).toEqual([
      { returnId: row.id, orderId: row.order_id, condition: "resellable" },
    ]);
  });

  it("the carrier's delivery of a return already past received (closed): acknowledged, nothing published", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "closed", received_at: new Date("2026-12-06T00:00:00Z") });

    const view = await actions.receive({ returnId: row.id, by: "carrier", condition: "resellable" });

    expect(view.status).toBe("closed");
    expectNothingChanged(desk, row.id, "closed");
  });

  it("the carrier's copy that lands while another copy moves it: answered as received, announced once more", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "approved" });
    desk.beforeTransition = (stored) => {
      stored.status = "received";
      stored.received_at = new Date("2026-12-06T00:00:00Z");
      stored.condition = "resellable";
    };

    const view = await actions.receive({ returnId: row.id, by: "carrier", condition: "resellable" });

    expect(view.status).toBe("received");
    expect(desk.entries).toEqual([]);
    expect(desk.published.map((event) => event.id)).toEqual([`return-received-${row.id}`]);
  });

  it("ops receiving twice are refused (return_not_actionable), nothing published", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "received", received_at: new Date("2026-12-06T00:00:00Z") });

    const error = await refusal(
      actions.receive({ returnId: row.id, by: "ops-console", condition: "resellable" }),
    );

    expect(error.code).toBe("return_not_actionable");
    expect(error.message).toBe(`Return ${row.id}: it is received: it cannot be received`);
    expect(desk.transitions).toEqual([]);
    expectNothingChanged(desk, row.id, "received");
  });

  it("the carrier's delivery of a cancelled return never received is refused, nothing published", async () => {
    const { desk, actions } = setup();
    const row = desk.put({ status: "cancelled" });

    const error = await refusal(
      actions.receive({ returnId: row.id, by: "carrier", condition: "resellable" }),
    );

    expect(error.code).toBe("return_not_actionable");
    expect(error.details).toEqual({ status: "cancelled" });
    expectNothingChanged(desk, row.id, "cancelled");
  });

  it("refuses a missing return (404)", async () => {
    const { desk, actions } = setup();
    const error = await refusal(
      actions.receive({ returnId: "nope", by: "carrier", condition: "resellable" }),
    );
    expect(error.code).toBe("return_not_found");
    expect(desk.published).toEqual([]);
  });
});

describe("reads", () => {
  it("get answers the return's view; list the order's returns as the query gives them", async () => {
    const { desk, actions } = setup();
    const first = desk.put({ status: "approved" });
    const second = desk.put({ status: "rejected" });
    desk.put({ order_id: "00000000-0000-4000-8000-0000000000cc" });

    expect((await actions.get(first.id)).returnId).toBe(first.id);
    expect((await refusal(actions.get("nope"))).code).toBe("return_not_found");
    expect((await actions.list(first.order_id)).map((view) => view.returnId)).toEqual([second.id, first.id]);
  });

  it("listOpen asks for 100 by default, at least 1 and at most 500, and answers the open ones", async () => {
    const { desk, actions } = setup();
    const open = desk.put({ status: "requested" });
    desk.put({ status: "closed" });

    const views = await actions.listOpen();
    await actions.listOpen(0);
    await actions.listOpen(1000);
    await actions.listOpen(7);

    expect(views.map((view) => view.returnId)).toEqual([open.id]);
    expect(desk.openLimits).toEqual([100, 1, 500, 7]);
  });
});

describe("the return's view", () => {
  const at = (text: string) => new Date(text);

  it("a plain return with a label: every column read, no exchange", () => {
    const desk = new FakeReturnDesk();
    const row = desk.put({
      status: "received",
      reason: "too_big",
      note: "n",
      requested_by: "ops-console",
      label_carrier: "USPS",
      label_tracking_number: "RET-1",
      label_tracking_url: "https://track/RET-1",
      label_url: "https://labels/RET-1.png",
      label_tracker_status: "in_transit",
      label_refund_status: "submitted",
      label_sent_at: at("2026-12-01T00:00:00.000Z"),
      condition: "resellable",
      received_at: at("2026-12-02T00:00:00.000Z"),
      refund_amount: 2500,
      refunded_at: at("2026-12-03T00:00:00.000Z"),
      restocked_at: at("2026-12-04T00:00:00.000Z"),
      written_off_at: at("2026-12-05T00:00:00.000Z"),
      closed_at: at("2026-12-06T00:00:00.000Z"),
    });

    expect(toReturnView(row)).toEqual({
      returnId: row.id,
      orderId: row.order_id,
      status: "received",
      reason: "too_big",
      note: "n",
      requestedBy: "ops-console",
      lines: row.lines,
      exchange: null,
      label: {
        carrier: "USPS",
        trackingNumber: "RET-1",
        trackingUrl: "https://track/RET-1",
        labelUrl: "https://labels/RET-1.png",
        trackerStatus: "in_transit",
        refundStatus: "submitted",
        sentAt: "2026-12-01T00:00:00.000Z",
      },
      condition: "resellable",
      receivedAt: "2026-12-02T00:00:00.000Z",
      refundAmount: 2500,
      refundedAt: "2026-12-03T00:00:00.000Z",
      restockedAt: "2026-12-04T00:00:00.000Z",
      writtenOffAt: "2026-12-05T00:00:00.000Z",
      closedAt: "2026-12-06T00:00:00.000Z",
    });
  });

  it("an exchange with its charge: the new items' shipment and the charge; no label yet", () => {
    const desk = new FakeReturnDesk();
    const row = desk.put({
      lines: [
        { sku: "MUG", quantity: 1, unitPrice: 900, exchangeSku: null, exchangeUnitPrice: null },
        { sku: "TEE-M", quantity: 1, unitPrice: 2500, exchangeSku: "TEE-L", exchangeUnitPrice: 3000 },
      ],
      exchange_tracking_number: "EXC-1",
      exchange_tracking_url: "https://track/EXC-1",
      exchange_reserved_at: at("2026-12-01T00:00:00.000Z"),
      exchange_sent_at: at("2026-12-02T00:00:00.000Z"),
      exchange_tracker_status: "delivered",
      exchange_delivered_at: at("2026-12-03T00:00:00.000Z"),
      exchange_charge_amount: 500,
      exchange_charge_status: "charged",
      exchange_charge_intent_id: "pi_1",
      exchange_charge_error: "none",
      exchange_charged_at: at("2026-12-01T12:00:00.000Z"),
    });

    const view = toReturnView(row);

    expect(view.exchange).toEqual({
      trackingNumber: "EXC-1",
      trackingUrl: "https://track/EXC-1",
      reservedAt: "2026-12-01T00:00:00.000Z",
      sentAt: "2026-12-02T00:00:00.000Z",
      trackerStatus: "delivered",
      deliveredAt: "2026-12-03T00:00:00.000Z",
      charge: {
        amount: 500,
        status: "charged",
        paymentIntentId: "pi_1",
        error: "none",
        chargedAt: "2026-12-01T12:00:00.000Z",
      },
    });
    expect(view.label).toBeNull();
    expect([view.receivedAt, view.refundedAt, view.closedAt]).toEqual([null, null, null]);
  });

  it("an exchange with no charge asked: charge null, its dates null until set", () => {
    const desk = new FakeReturnDesk();
    const row = desk.put({
      lines: [{ sku: "TEE-M", quantity: 1, unitPrice: 2500, exchangeSku: "TEE-S", exchangeUnitPrice: 2000 }],
    });

    expect(toReturnView(row).exchange).toEqual({
      trackingNumber: null,
      trackingUrl: null,
      reservedAt: null,
      sentAt: null,
      trackerStatus: null,
      deliveredAt: null,
      charge: null,
    });
  });
});

describe("isReturnRefusal", () => {
  it("is true for the refusals a customer can act on, false for the rest and for other errors", () => {
    for (const code of [
      "order_not_returnable",
      "return_window_closed",
      "return_line_invalid",
      "return_quantity_exceeded",
      "validation_failed",
      "exchange_needs_saved_card",
    ] as const)
      expect(isReturnRefusal(new AppError(code, "x"))).toBe(true);
    expect(isReturnRefusal(new AppError("return_not_actionable", "x"))).toBe(false);
    expect(isReturnRefusal(new AppError("upstream_unavailable", "x"))).toBe(false);
    expect(isReturnRefusal(new Error("order_not_returnable"))).toBe(false);
  });
});
