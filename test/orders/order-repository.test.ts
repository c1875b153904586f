import { createOrderRepository, type OrderStatus } from "../../src/orders/order-repository";
import { createFulfilmentRecords } from "../../src/orders/fulfilment-records";
import { createOrderRedrive, redriveOrder } from "../../src/orders/redrive-order";
import { createTestDatabase, type TestDatabase } from "../support/database";
import type { OrderFacts } from "../../src/shared/order-model";

/** The claim and the order repository's conditional updates, each guard tested on its own. */
describe("order repository: claim, transitions, cancellation, re-drive", () => {
  let database: TestDatabase;
  const moves: OrderStatus[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  beforeEach(() => moves.splice(0));

  const orders = () => createOrderRepository(database.db, { onTransition: (to) => moves.push(to) });
  const order = (data: { status?: OrderStatus; claimId?: string; cancelRequestedAt?: Date } = {}) =>
    database.db.order.create({
      data: { customerId: "cus_repo", email: "buyer@example.com", currency: "usd", total: 1000, ...data },
    });
  const row = (id: string) => database.db.order.findUniqueOrThrow({ where: { id } });

  it("gives a payable order to the first claim only; a retried claim finds its own", async () => {
    for (const status of ["authorized", "paid"] as const) {
      const { id } = await order({ status });
      expect(await orders().claim(id, "claim-a")).toEqual({ claimed: true });
      expect(await orders().claim(id, "claim-b")).toEqual({
        claimed: false,
        reason: "claimed-by-another-run",
      });
      expect(await orders().claim(id, "claim-a")).toEqual({ claimed: true });
      expect(await row(id)).toMatchObject({ claimId: "claim-a", status: "fulfilling" });
    }
    expect(moves).toEqual(["fulfilling", "fulfilling"]);
  });

  it("a claim for a run hands it the order's PaymentIntent and lines and writes the run's claimed entry, once", async () => {
    const { id } = await order({ status: "paid" });
    await database.db.order.update({ where: { id }, data: { paymentIntentId: "pi_repo_claim" } });
    await database.db.product.create({
      data: { sku: "CLAIM-1", name: "CLAIM-1", unitPrice: 1000, currency: "usd", stockOnHand: 1 },
    });
    await database.db.orderLine.create({
      data: { orderId: id, sku: "CLAIM-1", name: "Name CLAIM-1", unitPrice: 1000, quantity: 1 },
    });

    expect(await orders().claim(id, "claim-run", { runId: "run-claim-1" })).toEqual({
      claimed: true,
      order: {
        paymentIntentId: "pi_repo_claim",
        lines: [{ sku: "CLAIM-1", name: "Name CLAIM-1", unitPrice: 1000, quantity: 1 }],
      },
    });
    // A retried claim step finds its own claim: no second entry.
    expect(await orders().claim(id, "claim-run", { runId: "run-claim-1" })).toEqual({ claimed: true });
    const entries = await database.db.orderTimelineEntry.findMany({ where: { orderId: id } });
    expect(entries.map(({ kind, detail, runId }) => ({ kind, detail, runId }))).toEqual([
      { kind: "claimed", detail: { claimId: "claim-run" }, runId: "run-claim-1" },
    ]);
    expect(moves).toEqual(["fulfilling"]);
  });

  it("refuses a claim while a cancel is requested, before payment, after it failed, and for an unknown order", async () => {
    const cancelled = await order({ status: "authorized", cancelRequestedAt: new Date() });
    expect(await orders().claim(cancelled.id, "c")).toEqual({ claimed: false, reason: "cancel-requested" });
    for (const status of ["pending", "payment_processing"] as const) {
      const { id } = await order({ status });
      expect(await orders().claim(id, "c")).toEqual({ claimed: false, reason: "not-paid-yet" });
    }
    for (const status of ["payment_failed", "expired", "cancelled", "shipped"] as const) {
      const { id } = await order({ status });
      expect(await orders().claim(id, "c")).toEqual({ claimed: false, reason: "not-payable" });
      expect((await row(id)).claimId).toBeNull();
    }
    expect(await orders().claim("00000000-0000-4000-8000-000000000003", "c")).toEqual({
      claimed: false,
      reason: "not-found",
    });
    expect(moves).toEqual([]);
  });

  it("lets a re-driven order (fulfilling, claim released) be claimed again, once", async () => {
    const { id } = await order({ status: "fulfilling", claimId: "old-run" });
    expect(await orders().claim(id, "new-run")).toEqual({ claimed: false, reason: "claimed-by-another-run" });
    const event = await createOrderRedrive(database.db).prepare(id, "test");
    expect(event).toMatchObject({ generation: 1, id: `order-placed-${id}-redrive-1` });
    expect(event?.data).toMatchObject({ orderId: id, fulfilmentKey: `${id}/redrive-1`, currency: "usd" });
    expect(await orders().claim(id, "new-run")).toEqual({ claimed: true });
    expect(await orders().claim(id, "newer-run")).toEqual({
      claimed: false,
      reason: "claimed-by-another-run",
    });
    expect(await row(id)).toMatchObject({ claimId: "new-run", redriveGeneration: 1 });
  });

  it("gives a re-driven order whose parcel is booked (shipped or delivered, claim released) to one run, without moving it", async () => {
    for (const status of ["shipped", "delivered"] as const) {
      const { id } = await order({ status });
      await database.db.shipment.create({
        data: {
          orderId: id,
          carrier: "USPS",
          trackingNumber: `TRK-${id}`,
          trackingUrl: "http://shop.test/t",
        },
      });
      expect(await orders().claim(id, "resumed-run")).toEqual({ claimed: true, booked: true });
      expect(await orders().claim(id, "other-run")).toEqual({
        claimed: false,
        reason: "claimed-by-another-run",
      });
      // A retried claim step finds its own claim, still booked.
      expect(await orders().claim(id, "resumed-run")).toEqual({ claimed: true, booked: true });
      expect(await row(id)).toMatchObject({ claimId: "resumed-run", status });
    }
    // Shipped with a cancel requested: the cancel decides; shipped without a parcel: nothing to resume.
    const cancelling = await order({ status: "shipped", cancelRequestedAt: new Date() });
    await database.db.shipment.create({
      data: {
        orderId: cancelling.id,
        carrier: "USPS",
        trackingNumber: `TRK-${cancelling.id}`,
        trackingUrl: "http://shop.test/t",
      },
    });
    expect(await orders().claim(cancelling.id, "c")).toEqual({ claimed: false, reason: "cancel-requested" });
    const noParcel = await order({ status: "shipped" });
    expect(await orders().claim(noParcel.id, "c")).toEqual({ claimed: false, reason: "not-payable" });
    for (const { id } of [cancelling, noParcel]) expect((await row(id)).claimId).toBeNull();
    expect(moves).toEqual([]);
  });

  it("re-drives only paid, unshipped orders with no cancel requested", async () => {
    const redrive = createOrderRedrive(database.db);
    for (const status of ["pending", "payment_failed", "cancelled", "shipped", "completed"] as const) {
      const { id } = await order({ status });
      expect(await redrive.prepare(id, "test")).toBeNull();
      expect((await row(id)).redriveGeneration).toBe(0);
    }
    const cancelling = await order({ status: "fulfilling", cancelRequestedAt: new Date() });
    expect(await redrive.prepare(cancelling.id, "test")).toBeNull();
    const booked = await order({ status: "fulfilling", claimId: "run" });
    await database.db.shipment.create({
      data: { orderId: booked.id, carrier: "USPS", trackingNumber: "SBX-REPO-1", trackingUrl: "http://t" },
    });
    expect(await redrive.prepare(booked.id, "test")).toBeNull();
    const paid = await order({ status: "paid" });
    expect((await redrive.prepare(paid.id, "test"))?.generation).toBe(1);
    expect((await redrive.prepare(paid.id, "test"))?.generation).toBe(2);
    const timeline = await database.db.orderTimelineEntry.findMany({ where: { orderId: paid.id } });
    expect(timeline.map((entry) => [entry.kind, entry.detail])).toEqual([
      ["redriven", { generation: 1, by: "test" }],
      ["redriven", { generation: 2, by: "test" }],
    ]);
    // Not re-drivable is not unknown: the API answers 409 for the first, 404 for the second.
    expect(await redrive.exists(cancelling.id)).toBe(true);
    expect(await redrive.exists("00000000-0000-4000-8000-00000000abcd")).toBe(false);
  });

  it("moves an order only from the given statuses and reports each move once", async () => {
    const { id } = await order({ status: "shipped" });
    expect(await orders().transition(id, ["fulfilling"], "cancelled")).toBe(false);
    expect(await orders().transition(id, ["fulfilling", "shipped"], "delivered")).toBe(true);
    expect((await row(id)).status).toBe("delivered");
    expect(moves).toEqual(["delivered"]);
  });

  it("moves an order with its timeline entry in one statement: the entry once, the move reported only when it landed", async () => {
    const { id } = await order({ status: "shipped" });
    const entry = {
      kind: "delivered" as const,
      detail: { deliveredAt: "2026-12-02T08:00:00.000Z" },
      runId: "run-t",
    };
    expect(await orders().transition(id, ["shipped"], "delivered", entry)).toBe(true);
    expect(await orders().transition(id, ["shipped"], "delivered", entry)).toBe(false);
    expect((await row(id)).status).toBe("delivered");
    const entries = await database.db.orderTimelineEntry.findMany({ where: { orderId: id } });
    expect(entries.map(({ kind, detail, runId }) => ({ kind, detail, runId }))).toEqual([entry]);
    expect(moves).toEqual(["delivered"]);
  });

  it("marks a cancellation only from a cancellable status and before a parcel is booked", async () => {
    const open = await order({ status: "fulfilling" });
    expect(await orders().requestCancellation(open.id, ["authorized", "fulfilling"])).toBe(true);
    expect((await row(open.id)).cancelRequestedAt).not.toBeNull();
    const shipped = await order({ status: "shipped" });
    expect(await orders().requestCancellation(shipped.id, ["authorized", "fulfilling"])).toBe(false);
    const booked = await order({ status: "fulfilling" });
    await database.db.shipment.create({
      data: { orderId: booked.id, carrier: "USPS", trackingNumber: "SBX-REPO-2", trackingUrl: "http://t" },
    });
    expect(await orders().requestCancellation(booked.id, ["authorized", "fulfilling"])).toBe(false);
    expect((await row(booked.id)).cancelRequestedAt).toBeNull();
  });

  it("flags one order for ops and reads it back for fulfilment, lines by SKU", async () => {
    const { id } = await order({ status: "authorized" });
    const other = await order({ status: "authorized" });
    await orders().flagForOps(id, "look at this");
    expect((await row(id)).attentionReason).toBe("look at this");
    expect((await row(other.id)).attentionReason).toBeNull();
    for (const sku of ["REPO-B", "REPO-A"]) {
      await database.db.product.create({
        data: { sku, name: sku, unitPrice: 500, currency: "usd", stockOnHand: 1 },
      });
      await database.db.orderLine.create({
        data: { orderId: id, sku, name: `Name ${sku}`, unitPrice: 500, quantity: 1 },
      });
    }
    const view = await orders().findForFulfilment(id);
    expect(view).toMatchObject({ id, status: "authorized", total: 1000, hasShipment: false, claimId: null });
    expect(view?.lines).toEqual([
      { sku: "REPO-A", name: "Name REPO-A", unitPrice: 500, quantity: 1 },
      { sku: "REPO-B", name: "Name REPO-B", unitPrice: 500, quantity: 1 },
    ]);
    await database.db.shipment.create({
      data: { orderId: id, carrier: "USPS", trackingNumber: "SBX-REPO-3", trackingUrl: "http://t" },
    });
    expect((await orders().findForFulfilment(id))?.hasShipment).toBe(true);
    // Without a transition listener, moving an order still works.
    expect(await createOrderRepository(database.db).transition(other.id, ["authorized"], "paid")).toBe(true);
    expect(await orders().findForFulfilment("00000000-0000-4000-8000-000000000004")).toBeNull();
  });
});

describe("fulfilment records: guarded writes", () => {
  let database: TestDatabase;
  const moves: OrderStatus[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());
  beforeEach(() => moves.splice(0));

  const records = () => createFulfilmentRecords(database.db, { onTransition: (to) => moves.push(to) });
  const claimed = (data: { status?: OrderStatus; cancelRequestedAt?: Date } = {}) =>
    database.db.order.create({
      data: {
        customerId: "cus_records",
        email: "buyer@example.com",
        currency: "usd",
        total: 2500,
        status: "fulfilling",
        claimId: "run-claim",
        ...data,
      },
    });
  const capture = (orderId: string, claimId = "run-claim") => ({
    orderId,
    claimId,
    runId: "run-1",
    paymentIntentId: `pi_${orderId.slice(0, 8)}`,
    amountCaptured: 2500,
    currency: "usd",
    alreadyCaptured: false,
  });
  const booking = (orderId: string) => ({
    carrier: "USPS",
    trackingNumber: `SBX-${orderId.slice(0, 8)}`,
    trackingUrl: "http://shop.test/track/x",
  });
  const kinds = async (orderId: string) =>
    (await database.db.orderTimelineEntry.findMany({ where: { orderId }, orderBy: { id: "asc" } })).map(
      (entry) => [entry.kind, entry.runId],
    );

  it("records a capture while the run owns an uncancelled, fulfilling order", async () => {
    const { id } = await claimed();
    const recorded = await records().recordCapture(capture(id));
    const payment = await database.db.payment.findUniqueOrThrow({ where: { orderId: id } });
    expect(recorded).toEqual({ landed: true, value: { paymentId: payment.id } });
    expect(payment).toMatchObject({ status: "captured", amountCaptured: 2500, amountAuthorized: 2500 });
    expect(await kinds(id)).toEqual([["payment-captured", "run-1"]]);
    // A retried step records again without a second timeline entry or an error.
    expect(await records().recordCapture(capture(id))).toEqual({
      landed: true,
      value: { paymentId: payment.id },
    });
    const entries = await database.db.orderTimelineEntry.findMany({ where: { orderId: id } });
    expect(entries.map((entry) => entry.detail)).toEqual([
      {
        paymentIntentId: capture(id).paymentIntentId,
        amountCaptured: 2500,
        currency: "usd",
        alreadyCaptured: false,
      },
    ]);
  });

  it("records a partial capture with what was authorized and what of it was already refunded", async () => {
    const { id } = await claimed();
    const partial = { ...capture(id), amountCaptured: 1500, amountAuthorized: 2500, amountRefunded: 300 };
    expect(await records().recordCapture(partial)).toMatchObject({ landed: true });
    expect(await database.db.payment.findUniqueOrThrow({ where: { orderId: id } })).toMatchObject({
      status: "captured",
      amountAuthorized: 2500,
      amountCaptured: 1500,
      amountRefunded: 300,
    });
  });

  it("refuses a capture once a cancel is requested, the order has ended, or another run owns it", async () => {
    const cancelling = await claimed({ cancelRequestedAt: new Date() });
    expect(await records().recordCapture(capture(cancelling.id))).toEqual({
      landed: false,
      reason: "cancelled",
    });
    const ended = await claimed({ status: "cancelled" });
    expect(await records().recordCapture(capture(ended.id))).toEqual({ landed: false, reason: "cancelled" });
    const owned = await claimed();
    expect(await records().recordCapture(capture(owned.id, "other-claim"))).toEqual({
      landed: false,
      reason: "superseded",
    });
    expect(await records().recordCapture(capture("00000000-0000-4000-8000-000000000005"))).toEqual({
      landed: false,
      reason: "superseded",
    });
    for (const { id } of [cancelling, ended, owned]) {
      expect(await database.db.payment.count({ where: { orderId: id } })).toBe(0);
      expect(await kinds(id)).toEqual([]);
    }
  });

  it("records a shipment once: the order ships, a repeat reports it landed and moves nothing", async () => {
    const { id } = await claimed();
    expect(
      await records().recordShipment({
        orderId: id,
        claimId: "run-claim",
        runId: "run-1",
        parcels: [{ ...booking(id), parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({
      landed: true,
      value: null,
    });
    expect(
      await records().recordShipment({
        orderId: id,
        claimId: "run-claim",
        runId: "run-1",
        parcels: [{ ...booking(id), parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({
      landed: true,
      value: null,
    });
    expect((await database.db.order.findUniqueOrThrow({ where: { id } })).status).toBe("shipped");
    expect(await database.db.shipment.findFirstOrThrow({ where: { orderId: id } })).toMatchObject({
      ...booking(id),
      parcelNumber: 1,
      generation: 0,
    });
    expect(await kinds(id)).toEqual([["shipment-booked", "run-1"]]);
    const { carrier, trackingNumber, trackingUrl } = booking(id);
    expect(
      (await database.db.orderTimelineEntry.findMany({ where: { orderId: id } })).map(
        (entry) => entry.detail,
      ),
    ).toEqual([
      { carrier, trackingNumber, trackingUrl, parcels: [{ parcelNumber: 1, carrier, trackingNumber }] },
    ]);
    expect(moves).toEqual(["shipped"]);
    // Without a transition listener, recording still works.
    const quiet = await claimed();
    expect(
      await createFulfilmentRecords(database.db).recordShipment({
        orderId: quiet.id,
        claimId: "run-claim",
        runId: "run-2",
        parcels: [{ ...booking(quiet.id), parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({ landed: true, value: null });
  });

  it("stores each parcel's lines with its shipment row, only their SKU and quantity", async () => {
    const { id } = await claimed();
    const lines = [
      { sku: "PARCEL-A", quantity: 2, name: "not stored" },
      { sku: "PARCEL-B", quantity: 1, name: "not stored" },
    ];
    expect(
      await records().recordShipment({
        orderId: id,
        claimId: "run-claim",
        runId: "run-1",
        parcels: [{ ...booking(id), parcelNumber: 1, lines }],
      }),
    ).toEqual({ landed: true, value: null });
    expect((await database.db.shipment.findFirstOrThrow({ where: { orderId: id } })).lines).toEqual([
      { sku: "PARCEL-A", quantity: 2 },
      { sku: "PARCEL-B", quantity: 1 },
    ]);
  });

  it("stores the carrier's service, label and shipment id with the booking", async () => {
    const { id } = await claimed();
    const full = {
      ...booking(id),
      service: "Priority",
      labelUrl: "http://labels.test/1.pdf",
      providerId: "shp_1",
    };
    expect(
      await records().recordShipment({
        orderId: id,
        claimId: "run-claim",
        runId: "run-1",
        parcels: [{ ...full, parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({ landed: true, value: null });
    expect(await database.db.shipment.findFirstOrThrow({ where: { orderId: id } })).toMatchObject({
      service: "Priority",
      labelUrl: "http://labels.test/1.pdf",
      providerId: "shp_1",
    });
  });

  it("tells a run that lost its claim to a re-drive that it was superseded, even once the new run has shipped", async () => {
    const { id } = await claimed();
    expect(
      await records().recordShipment({
        orderId: id,
        claimId: "run-claim",
        runId: "run-1",
        parcels: [{ ...booking(id), parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({ landed: true, value: null });
    await database.db.order.update({ where: { id }, data: { claimId: "redriven-claim" } });
    expect(
      await records().recordShipment({
        orderId: id,
        claimId: "run-claim",
        runId: "run-0",
        parcels: [{ ...booking(id), parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({ landed: false, reason: "superseded" });
  });

  it("records a digital-only order (no booking) as delivered once: no shipment, the timeline says nothing to ship", async () => {
    const { id } = await claimed();
    const nothing = { orderId: id, claimId: "run-claim", runId: "run-1", parcels: null };
    expect(await records().recordShipment(nothing)).toEqual({ landed: true, value: null });
    expect(await records().recordShipment(nothing)).toEqual({ landed: true, value: null });

    expect((await database.db.order.findUniqueOrThrow({ where: { id } })).status).toBe("delivered");
    expect(await database.db.shipment.count({ where: { orderId: id } })).toBe(0);
    expect(await kinds(id)).toEqual([["nothing-to-ship", "run-1"]]);
    expect(moves).toEqual(["delivered"]);
  });

  it("records an empty list of parcels as a shipment with nothing to ship: no shipment row, no parcel entry", async () => {
    const { id } = await claimed();
    expect(
      await records().recordShipment({ orderId: id, claimId: "run-claim", runId: "run-1", parcels: [] }),
    ).toEqual({ landed: true, value: null });

    expect((await database.db.order.findUniqueOrThrow({ where: { id } })).status).toBe("shipped");
    expect(await database.db.shipment.count({ where: { orderId: id } })).toBe(0);
    expect(await kinds(id)).toEqual([["nothing-to-ship", "run-1"]]);
    expect(moves).toEqual(["shipped"]);
  });

  it("refuses a shipment for a cancelled order or another run's order, recording nothing", async () => {
    const cancelling = await claimed({ cancelRequestedAt: new Date() });
    const owned = await claimed();
    expect(
      await records().recordShipment({
        orderId: cancelling.id,
        claimId: "run-claim",
        runId: "r",
        parcels: [{ ...booking(cancelling.id), parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({ landed: false, reason: "cancelled" });
    expect(
      await records().recordShipment({
        orderId: owned.id,
        claimId: "other",
        runId: "r",
        parcels: [{ ...booking(owned.id), parcelNumber: 1, lines: [] }],
      }),
    ).toEqual({ landed: false, reason: "superseded" });
    for (const { id } of [cancelling, owned]) {
      expect(await database.db.shipment.count({ where: { orderId: id } })).toBe(0);
      expect((await database.db.order.findUniqueOrThrow({ where: { id } })).status).toBe("fulfilling");
    }
    expect(moves).toEqual([]);
  });
});

describe("redriveOrder (the admin API's and the console's re-drive)", () => {
  const event = {
    generation: 3,
    id: "order-placed-o-redrive-3",
    name: "shop/order.placed" as const,
    data: {
      orderId: "o",
      customerId: "c",
      email: "a@b.c",
      total: 1,
      currency: "usd",
      paymentIntentId: null,
      fulfilmentKey: "o/redrive-3",
    },
  };
  const deps = (prepared: typeof event | null, exists: boolean) => {
    const published: unknown[] = [];
    return {
      published,
      redrive: { prepare: async () => prepared, exists: async () => exists },
      publisher: { publish: async (e: unknown) => void published.push(e) },
      // The model's facts of a paid order not booked yet (it allows the re-drive), or none.
      facts: async (): Promise<OrderFacts | null> =>
        exists
          ? {
              status: "paid",
              cancelRequested: false,
              holdReason: null,
              labels: [],
              runFailed: false,
              labelPurchaseInFlight: false,
              captured: 0,
              refunded: 0,
            }
          : null,
    };
  };

  it("publishes the prepared event and answers with its generation and id", async () => {
    const d = deps(event, true);
    const asked: string[] = [];
    d.redrive.prepare = async (...args: unknown[]) => {
      asked.push(String(args[1]));
      return event;
    };
    expect(await redriveOrder(d, { orderId: "o", by: "ops-console" })).toEqual({
      orderId: "o",
      status: "redrive_requested",
      generation: 3,
      eventId: "order-placed-o-redrive-3",
    });
    expect(d.published).toEqual([{ id: event.id, name: event.name, data: event.data }]);
    expect(asked).toEqual(["ops-console"]);
  });

  it("says 404 for an unknown order and 409 for one that cannot be re-driven, publishing nothing", async () => {
    const unknown = deps(null, false);
    await expect(redriveOrder(unknown, { orderId: "o", by: "admin-api" })).rejects.toMatchObject({
      code: "order_not_found",
      message: "Order o does not exist",
    });
    const refused = deps(null, true);
    await expect(redriveOrder(refused, { orderId: "o", by: "admin-api" })).rejects.toMatchObject({
      code: "order_not_redrivable",
      message: expect.stringContaining("Order o cannot be re-driven"),
    });
    expect([...unknown.published, ...refused.published]).toEqual([]);
  });
});
