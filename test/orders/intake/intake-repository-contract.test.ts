import { randomUUID } from "node:crypto";
import type { OrderStatus } from "../../../src/generated/prisma/enums";
import { createIntakeRepository, type IntakeRepository } from "../../../src/orders/intake/intake-repository";
import { createTestDatabase, type TestDatabase } from "../../support/database";
import { FakeIntakeRepository } from "../../support/fakes/intake";

/**
 * The in-memory IntakeRepository (test/support/fakes/intake.ts) is only worth the agreement the
 * intake's fast tests rely on: the same scenarios, run against it and against the real one on
 * PostgreSQL, must answer alike.
 */
interface SeededOrder {
  status?: OrderStatus;
  paymentIntentId?: string | null;
  placedEventSentAt?: Date | null;
  attentionReason?: string | null;
  paymentStatus?: "authorized" | "captured" | "voided";
}

interface World {
  repository: IntakeRepository;
  /** Inserts an order; returns its id and Checkout Session id. */
  addOrder(fields?: SeededOrder): Promise<{ orderId: string; checkoutSessionId: string }>;
  row(orderId: string): Promise<{
    status: OrderStatus;
    paymentIntentId: string | null;
    attentionReason: string | null;
    shippingAddress: unknown;
    placedEventSentAt: Date | null;
  }>;
  timelineKinds(orderId: string): Promise<string[]>;
}

function fakeWorld(): World {
  const repository = new FakeIntakeRepository();
  return {
    repository,
    async addOrder(fields = {}) {
      const { paymentStatus, ...rest } = fields;
      const order = repository.addOrder({
        ...rest,
        checkoutSessionId: `cs_${randomUUID()}`,
        paymentStatuses: paymentStatus ? [paymentStatus] : [],
      });
      return { orderId: order.orderId, checkoutSessionId: order.checkoutSessionId };
    },
    async row(orderId) {
      return repository.order(orderId);
    },
    async timelineKinds(orderId) {
      return repository.timelineOf(orderId).map((entry) => entry.kind);
    },
  };
}

function postgresWorld(database: () => TestDatabase): World {
  return {
    get repository() {
      return createIntakeRepository(database().db);
    },
    async addOrder(fields = {}) {
      const { paymentStatus, ...rest } = fields;
      const checkoutSessionId = `cs_${randomUUID()}`;
      const order = await database().db.order.create({
        data: {
          customerId: "cus-ada",
          email: "ada@example.com",
          currency: "usd",
          total: 1200,
          checkoutSessionId,
          ...rest,
        },
      });
      if (paymentStatus) {
        await database().db.payment.create({
          data: {
            orderId: order.id,
            providerId: rest.paymentIntentId ?? `pi_${order.id}`,
            status: paymentStatus,
            currency: "usd",
          },
        });
      }
      return { orderId: order.id, checkoutSessionId };
    },
    async row(orderId) {
      return database().db.order.findUniqueOrThrow({ where: { id: orderId } });
    },
    async timelineKinds(orderId) {
      const entries = await database().db.orderTimelineEntry.findMany({
        where: { orderId },
        orderBy: { id: "asc" },
      });
      return entries.map((entry) => entry.kind);
    },
  };
}

let database: TestDatabase | undefined;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.drop());

describe.each([
  ["in-memory fake", fakeWorld],
  [
    "PostgreSQL",
    () =>
      postgresWorld(() => {
        if (!database) throw new Error("no test database");
        return database;
      }),
  ],
] as const)("IntakeRepository contract: %s", (_name, makeWorld) => {
  let w: World;
  beforeEach(() => {
    w = makeWorld();
  });
  const event = (type = "checkout.session.completed") => ({ id: `evt_${randomUUID()}`, type });
  const authorize = {
    from: ["pending"] as OrderStatus[],
    to: "authorized" as const,
    paymentIntentId: "pi_new",
    timelineKind: "payment-authorized" as const,
  };

  it("moves an order once per event id, only from one of `from`, and records each event once", async () => {
    const { orderId, checkoutSessionId } = await w.addOrder();
    const first = event();

    expect(await w.repository.recordTransition(first, checkoutSessionId, authorize)).toMatchObject({
      order: { orderId, status: "authorized", paymentIntentId: "pi_new", placedEventSentAt: null },
      firstDelivery: true,
      changed: true,
    });
    expect(await w.repository.recordTransition(first, checkoutSessionId, authorize)).toMatchObject({
      order: { status: "authorized" },
      firstDelivery: false,
      changed: false,
    });
    expect(await w.repository.recordTransition(event(), checkoutSessionId, authorize)).toMatchObject({
      order: { status: "authorized" },
      firstDelivery: true,
      changed: false,
    });
    expect(await w.timelineKinds(orderId)).toEqual(["payment-authorized"]);
    expect(await w.repository.peek(first.id, { checkoutSessionId })).toMatchObject({
      order: { orderId },
      recorded: true,
    });
  });

  it("places an order only when it is the order the payment names: its id (any case), total and currency (any case)", async () => {
    const { orderId, checkoutSessionId } = await w.addOrder();
    const terms = { orderId, total: 1200, currency: "usd" };
    for (const wrong of [
      { ...terms, orderId: randomUUID() },
      { ...terms, total: 1100 },
      { ...terms, currency: "eur" },
    ]) {
      const refused = event();
      expect(await w.repository.recordPlacement(refused, checkoutSessionId, authorize, wrong)).toEqual({
        order: expect.objectContaining({ orderId, status: "pending", total: 1200 }),
        firstDelivery: false,
        changed: false,
        termsMatch: false,
      });
      // Nothing written: not even the event id, so the general path can still record it.
      expect(await w.repository.peek(refused.id, { checkoutSessionId })).toMatchObject({ recorded: false });
    }
    expect(await w.timelineKinds(orderId)).toEqual([]);

    const first = event();
    const asStripeSaysIt = { orderId: orderId.toUpperCase(), total: 1200, currency: "USD" };
    expect(
      await w.repository.recordPlacement(first, checkoutSessionId, authorize, asStripeSaysIt),
    ).toMatchObject({
      order: { orderId, status: "authorized", paymentIntentId: "pi_new", placedEventSentAt: null },
      firstDelivery: true,
      changed: true,
      termsMatch: true,
    });
    expect(await w.repository.recordPlacement(first, checkoutSessionId, authorize, terms)).toMatchObject({
      order: { orderId, status: "authorized" },
      firstDelivery: false,
      changed: false,
      termsMatch: true,
    });
    expect(await w.timelineKinds(orderId)).toEqual(["payment-authorized"]);
    expect(await w.repository.recordPlacement(event(), "cs_unknown", authorize, terms)).toEqual({
      order: null,
      firstDelivery: false,
      changed: false,
      termsMatch: false,
    });
  });

  it("keeps the PaymentIntent and address when the change brings none, and stores them when it does", async () => {
    const { orderId, checkoutSessionId } = await w.addOrder({ paymentIntentId: "pi_kept" });
    await w.repository.recordTransition(event(), checkoutSessionId, {
      ...authorize,
      paymentIntentId: null,
      shippingAddress: null,
    });
    expect(await w.row(orderId)).toMatchObject({ paymentIntentId: "pi_kept", shippingAddress: null });

    const other = await w.addOrder();
    const address = { line1: "1 Main St", city: "Springfield", postalCode: "12345", country: "US" };
    await w.repository.recordTransition(event(), other.checkoutSessionId, {
      ...authorize,
      shippingAddress: address,
    });
    expect(await w.row(other.orderId)).toMatchObject({ paymentIntentId: "pi_new", shippingAddress: address });
  });

  it("writes nothing for an order it does not have", async () => {
    const unknown = event();
    expect(await w.repository.recordTransition(unknown, "cs_unknown", authorize)).toEqual({
      order: null,
      firstDelivery: false,
      changed: false,
    });
    const { checkoutSessionId } = await w.addOrder();
    expect(await w.repository.peek(unknown.id, { checkoutSessionId })).toMatchObject({ recorded: false });
    expect(await w.repository.peek(unknown.id, { checkoutSessionId: "cs_unknown" })).toEqual({
      order: null,
      recorded: false,
    });
    expect(await w.repository.findOrder(randomUUID())).toBeNull();
    expect(
      await w.repository.recordDecline(event(), randomUUID(), { code: "x", message: "y" }),
    ).toMatchObject({
      order: null,
    });
  });

  it("an event id is recorded once, whichever order a second delivery names", async () => {
    const a = await w.addOrder();
    const b = await w.addOrder();
    const shared = event();
    await w.repository.recordTransition(shared, a.checkoutSessionId, authorize);

    expect(await w.repository.recordTransition(shared, b.checkoutSessionId, authorize)).toMatchObject({
      firstDelivery: false,
      changed: false,
      order: { orderId: b.orderId, status: "pending" },
    });
  });

  it("finds an order by each key; a PaymentIntent shared by two orders finds the newest", async () => {
    const older = await w.addOrder({ paymentIntentId: "pi_shared_contract" });
    const newer = await w.addOrder({ paymentIntentId: "pi_shared_contract" });
    const id = `evt_${randomUUID()}`;

    expect((await w.repository.peek(id, { checkoutSessionId: older.checkoutSessionId })).order?.orderId).toBe(
      older.orderId,
    );
    expect((await w.repository.peek(id, { orderId: older.orderId })).order?.orderId).toBe(older.orderId);
    expect((await w.repository.peek(id, { orderId: older.orderId.toUpperCase() })).order?.orderId).toBe(
      older.orderId,
    );
    expect((await w.repository.peek(id, { paymentIntentId: "pi_shared_contract" })).order?.orderId).toBe(
      newer.orderId,
    );
  });

  it("flags a lost authorization only on an authorized order whose money is still uncaptured, once", async () => {
    const lost = (paymentIntentId: string) =>
      w.repository.recordAuthorizationLost(event("payment_intent.canceled"), paymentIntentId, "lapsed");
    const open = await w.addOrder({
      status: "authorized",
      paymentIntentId: "pi_open",
      paymentStatus: "authorized",
    });
    const captured = await w.addOrder({
      status: "fulfilling",
      paymentIntentId: "pi_cap",
      paymentStatus: "captured",
    });
    const pending = await w.addOrder({ status: "pending", paymentIntentId: "pi_pending" });

    expect(await lost("pi_open")).toMatchObject({
      firstDelivery: true,
      changed: true,
      order: { status: "authorized" },
    });
    expect(await lost("pi_open")).toMatchObject({ firstDelivery: true, changed: false });
    expect(await lost("pi_cap")).toMatchObject({ firstDelivery: true, changed: false });
    expect(await lost("pi_pending")).toMatchObject({ firstDelivery: true, changed: false });
    expect(await w.row(open.orderId)).toMatchObject({ attentionReason: "lapsed", status: "authorized" });
    expect(await w.row(captured.orderId)).toMatchObject({ attentionReason: null });
    expect(await w.row(pending.orderId)).toMatchObject({ attentionReason: null });
    expect(await w.timelineKinds(open.orderId)).toEqual(["authorization-lost"]);
  });

  it("holds a mismatching payment for ops: the first reason stays, every event adds to the timeline", async () => {
    const { orderId, checkoutSessionId } = await w.addOrder();
    const first = event();
    expect(await w.repository.recordMismatch(first, checkoutSessionId, "first", ["a"])).toMatchObject({
      firstDelivery: true,
      changed: true,
      order: { status: "pending" },
    });
    expect(await w.repository.recordMismatch(event(), checkoutSessionId, "second", ["b"])).toMatchObject({
      changed: true,
    });
    expect(await w.repository.recordMismatch(first, checkoutSessionId, "again", ["a"])).toMatchObject({
      firstDelivery: false,
      changed: false,
    });
    expect(await w.row(orderId)).toMatchObject({ attentionReason: "first", status: "pending" });
    expect(await w.timelineKinds(orderId)).toEqual(["payment-mismatch", "payment-mismatch"]);
  });

  it("notes a decline only while the order is unpaid", async () => {
    const pending = await w.addOrder();
    const paid = await w.addOrder({ status: "paid", placedEventSentAt: new Date() });
    const decline = { code: "card_declined", message: "Declined." };

    expect(await w.repository.recordDecline(event(), pending.orderId, decline)).toMatchObject({
      firstDelivery: true,
      changed: true,
      order: { status: "pending" },
    });
    expect(await w.repository.recordDecline(event(), paid.orderId, decline)).toMatchObject({
      firstDelivery: true,
      changed: false,
      order: { status: "paid" },
    });
    expect(await w.timelineKinds(pending.orderId)).toEqual(["checkout-payment-declined"]);
    expect(await w.timelineKinds(paid.orderId)).toEqual([]);
  });

  it("marks an order announced once", async () => {
    const { orderId } = await w.addOrder({ status: "authorized" });
    expect(await w.repository.markAnnounced(orderId, "evt_a")).toBe(true);
    expect(await w.repository.markAnnounced(orderId, "evt_b")).toBe(false);
    expect(await w.repository.findOrder(orderId)).toMatchObject({ placedEventSentAt: expect.any(Date) });
    expect(await w.timelineKinds(orderId)).toEqual(["order-placed-sent"]);
  });
});
