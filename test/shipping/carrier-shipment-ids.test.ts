import { Client } from "pg";
import {
  createInMemoryCarrierShipmentIds,
  createPrismaCarrierShipmentIds,
  type CarrierShipmentIds,
} from "../../src/shipping/carrier-shipment-ids";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * The record decision 0185 rests on: the EasyPost shipment a label reference is bought on, first
 * writer wins, in PostgreSQL (production) and in memory (tools without a database) alike.
 */
describe("carrier shipment ids", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const stores: [string, () => CarrierShipmentIds][] = [
    ["PostgreSQL", () => createPrismaCarrierShipmentIds(database.db)],
    ["memory", () => createInMemoryCarrierShipmentIds()],
  ];

  it.each(stores)(
    "%s: nothing recorded, then the first claim wins, however many race and however often asked",
    async (_, make) => {
      const ids = make();
      const reference = `order-${Math.random().toString(16).slice(2)}`;
      expect(await ids.recorded(reference)).toBeNull();
      const claims = await Promise.all(
        Array.from({ length: 8 }, (__, i) => ids.claim(reference, `shp_${String(i).padStart(32, "0")}`)),
      );
      const [winner] = claims;
      expect(new Set(claims)).toEqual(new Set([winner]));
      expect(await ids.recorded(reference)).toBe(winner);
      expect(await ids.claim(reference, "shp_later")).toBe(winner);
      expect(await ids.recorded(`${reference}-2`)).toBeNull();
    },
  );

  it("PostgreSQL: a claim that waits on another attempt's uncommitted record answers that record once it commits", async () => {
    // The claim's insert finds the other attempt's row after its own statement began: a read in
    // that statement's snapshot would not see the winner. Decided by states, not time: the claim is
    // seen waiting on the lock before the other attempt commits.
    const ids = createPrismaCarrierShipmentIds(database.db);
    const reference = `order-${Math.random().toString(16).slice(2)}`;
    const other = new Client({ connectionString: database.url });
    const watcher = new Client({ connectionString: database.url });
    await other.connect();
    await watcher.connect();
    try {
      await other.query("BEGIN");
      await other.query(`INSERT INTO carrier_shipment_ids (reference, shipment_id) VALUES ($1, $2)`, [
        reference,
        "shp_first",
      ]);
      const claimed = ids.claim(reference, "shp_second");
      let settled = false;
      void claimed.then(
        () => (settled = true),
        () => (settled = true),
      );
      for (;;) {
        const { rows } = await watcher.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
          [(other as unknown as { processID: number }).processID],
        );
        if ((rows[0]?.n ?? 0) > 0 || settled) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(settled).toBe(false);
      await other.query("COMMIT");
      await expect(claimed).resolves.toBe("shp_first");
      expect(await ids.recorded(reference)).toBe("shp_first");
    } finally {
      await other.query("ROLLBACK").catch(() => undefined);
      await other.end();
      await watcher.end();
    }
  });
});
