import { createOrderRepository, type OrderStatus } from "../../src/orders/order-repository";
import { createOrderRedrive } from "../../src/orders/redrive-order";
import { createTestDatabase, type TestDatabase } from "../support/database";

/** Issue 11.5: the claim and the order repository's conditional updates, each guard on its own. */
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
      data: { orderId: booked.id, carrier: "sandbox", trackingNumber: "SBX-REPO-1", trackingUrl: "http://t" },
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
  });

  it("moves an order only from the given statuses and reports each move once", async () => {
    const { id } = await order({ status: "shipped" });
    expect(await orders().transition(id, ["fulfilling"], "cancelled")).toBe(false);
    expect(await orders().transition(id, ["fulfilling", "shipped"], "delivered")).toBe(true);
    expect((await row(id)).status).toBe("delivered");
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
      data: { orderId: booked.id, carrier: "sandbox", trackingNumber: "SBX-REPO-2", trackingUrl: "http://t" },
    });
    expect(await orders().requestCancellation(booked.id, ["authorized", "fulfilling"])).toBe(false);
    expect((await row(booked.id)).cancelRequestedAt).toBeNull();
  });

  it("flags an order for ops and reads it back for fulfilment", async () => {
    const { id } = await order({ status: "authorized" });
    await orders().flagForOps(id, "look at this");
    expect((await row(id)).attentionReason).toBe("look at this");
    const view = await orders().findForFulfilment(id);
    expect(view).toMatchObject({ id, status: "authorized", total: 1000, hasShipment: false, claimId: null });
    expect(await orders().findForFulfilment("00000000-0000-4000-8000-000000000004")).toBeNull();
  });
});
