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
});
