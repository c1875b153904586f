import type { Database } from "../db/client";

/**
 * Which EasyPost shipment a label reference is bought on, recorded before the buy (decision
 * 0185). EasyPost takes a reference in place of an id but does not keep references unique: two
 * attempts whose lookups both missed can each create a shipment with the same reference, and a
 * lookup by reference may then answer either. The id recorded here is the one the label is
 * bought on, whatever a reference lookup answers later.
 */
export interface CarrierShipmentIds {
  /** The recorded shipment id, or null when no attempt has recorded one. */
  recorded(reference: string): Promise<string | null>;
  /** Records `shipmentId` unless one is recorded already; answers the recorded one (first wins). */
  claim(reference: string, shipmentId: string): Promise<string>;
}

export function createPrismaCarrierShipmentIds(db: Database): CarrierShipmentIds {
  return {
    async recorded(reference) {
      const row = await db.carrierShipmentId.findUnique({
        where: { reference },
        select: { shipmentId: true },
      });
      return row?.shipmentId ?? null;
    },
    async claim(reference, shipmentId) {
      // INSERT ... ON CONFLICT DO NOTHING, then read the winner: one round trip each, no race.
      await db.carrierShipmentId.createMany({ data: [{ reference, shipmentId }], skipDuplicates: true });
      const row = await db.carrierShipmentId.findUniqueOrThrow({
        where: { reference },
        select: { shipmentId: true },
      });
      return row.shipmentId;
    },
  };
}

/** In one process's memory: development tools and tests without a database. */
export function createInMemoryCarrierShipmentIds(): CarrierShipmentIds {
  const ids = new Map<string, string>();
  return {
    recorded: async (reference) => ids.get(reference) ?? null,
    claim: async (reference, shipmentId) => {
      if (!ids.has(reference)) ids.set(reference, shipmentId);
      return ids.get(reference) as string;
    },
  };
}
