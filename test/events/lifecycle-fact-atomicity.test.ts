import { createHolds } from "../../src/orders/hold-order";
import { createReturnRecords } from "../../src/returns/return-records";
import { createReturnActions } from "../../src/returns/returns";
import type { TimelineKind } from "../../src/timeline/kinds";
import { createTimeline, type Timeline } from "../../src/timeline/timeline";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * A hold placed, a hold released and a return received are lifecycle facts
 * (shop/order.fulfilment-held.v1, .fulfilment-released.v1, shop/return.received.v1): the outbox
 * row comes from the timeline entry's trigger (decision 0196), so the entry must commit with the
 * state change or not at all. Two ways it could come apart: the entry's own write fails (here: a
 * trigger refuses it) after the change committed, and the process dies between the change and its
 * entry (here: the timeline module throws, as a crash would stop it; the holds write their entries
 * in the change's own statement and have no timeline module to stop in any more).
 */
describe("a lifecycle fact and its state change commit together", () => {
  let database: TestDatabase;
  const publisher = { publish: async () => undefined };

  beforeAll(async () => {
    database = await createTestDatabase();
    // Refuses the timeline entries of the kinds listed, as a failed write would (this file's database only).
    await database.db.$executeRawUnsafe(`CREATE TABLE refused_entry_kinds (kind text PRIMARY KEY)`);
    await database.db.$executeRawUnsafe(`
      CREATE FUNCTION refuse_listed_entries() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM refused_entry_kinds WHERE kind = NEW.kind) THEN
          RAISE EXCEPTION 'timeline entry % refused by the test', NEW.kind;
        END IF;
        RETURN NEW;
      END $$`);
    await database.db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_listed_entries BEFORE INSERT ON order_timeline
       FOR EACH ROW EXECUTE FUNCTION refuse_listed_entries()`,
    );
  });
  afterAll(() => database.drop());
  afterEach(() => database.db.$executeRawUnsafe(`DELETE FROM refused_entry_kinds`));

  const refuse = (kind: TimelineKind) =>
    database.db.$executeRawUnsafe(`INSERT INTO refused_entry_kinds (kind) VALUES ($1)`, kind);

  /** The timeline of a process that dies before its separate write lands. */
  const crashingTimeline = (): Pick<Timeline, "record"> => ({
    record: () => Promise.reject(new Error("the process died here")),
  });

  const eventsOf = async (orderId: string, name: string) =>
    database.db.lifecycleOutboxEntry.count({ where: { orderId, name } });

  async function paidOrder(): Promise<string> {
    const order = await database.db.order.create({
      data: {
        customerId: "cus_atomic",
        email: "a@example.com",
        currency: "usd",
        total: 1000,
        status: "paid",
      },
    });
    return order.id;
  }
  const heldReason = async (orderId: string) =>
    (await database.db.order.findUniqueOrThrow({ where: { id: orderId } })).holdReason;

  const holds = () => createHolds({ db: database.db, publisher });

  describe("shop/order.fulfilment-held.v1", () => {
    const held = "shop/order.fulfilment-held.v1";

    it("its entry refused: not held, no event, the caller told", async () => {
      const orderId = await paidOrder();
      await refuse("hold-placed");
      await expect(holds().placeHold(orderId, "high_risk")).rejects.toThrow(/refused by the test/);
      expect({ hold: await heldReason(orderId), events: await eventsOf(orderId, held) }).toEqual({
        hold: null,
        events: 0,
      });
    });
  });

  describe("shop/order.fulfilment-released.v1", () => {
    const released = "shop/order.fulfilment-released.v1";
    async function heldOrder(): Promise<string> {
      const orderId = await paidOrder();
      expect(await holds().placeHold(orderId, "address")).not.toBeNull();
      return orderId;
    }

    it("its entry refused: still held, no event, the caller told", async () => {
      const orderId = await heldOrder();
      await refuse("hold-released");
      await expect(holds().releaseHold(orderId)).rejects.toThrow(/refused by the test/);
      expect({ hold: await heldReason(orderId), events: await eventsOf(orderId, released) }).toEqual({
        hold: "address",
        events: 0,
      });
    });
  });

  describe("shop/return.received.v1", () => {
    const received = "shop/return.received.v1";
    async function approvedReturn() {
      const orderId = await paidOrder();
      await database.db.order.update({ where: { id: orderId }, data: { status: "delivered" } });
      const row = await database.db.return.create({
        data: { orderId, reason: "wrong_item", requestedBy: "customer", status: "approved" },
      });
      return { orderId, returnId: row.id };
    }
    const returns = (timeline: Pick<Timeline, "record">) =>
      createReturnActions({
        records: createReturnRecords(database.db),
        publisher,
        timeline,
        windowMs: 30 * 24 * 3600_000,
        approval: "auto",
        listForOrder: async () => [],
      });
    const statusOf = async (returnId: string) =>
      (await database.db.return.findUniqueOrThrow({ where: { id: returnId } })).status;

    it("a crash after the receipt: received, and its event is in the outbox", async () => {
      const { orderId, returnId } = await approvedReturn();
      await returns(crashingTimeline())
        .receive({ returnId, by: "ops-console", condition: "resellable" })
        .catch(() => undefined);
      expect({ status: await statusOf(returnId), events: await eventsOf(orderId, received) }).toEqual({
        status: "received",
        events: 1,
      });
    });

    it("its entry refused: still approved, no event, the caller told", async () => {
      const { orderId, returnId } = await approvedReturn();
      await refuse("return-received");
      await expect(
        returns(createTimeline(database.db)).receive({ returnId, by: "carrier", condition: "resellable" }),
      ).rejects.toThrow(/refused by the test/);
      expect({ status: await statusOf(returnId), events: await eventsOf(orderId, received) }).toEqual({
        status: "approved",
        events: 0,
      });
    });
  });
});
