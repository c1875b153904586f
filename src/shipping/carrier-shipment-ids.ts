import { sqlPool, type Database } from "../db/client";

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

const recordedStatement = `SELECT shipment_id FROM carrier_shipment_ids WHERE reference = $1`;
/**
 * Records the id unless one is, and answers the recorded one, in one round trip. The read of an
 * existing row is in the statement's snapshot: a row another attempt committed while this insert
 * waited on it is not seen there (the insert does nothing, the read finds nothing), and the
 * caller reads it again in a new statement.
 */
const claimStatement = `WITH ins AS (
    INSERT INTO carrier_shipment_ids (reference, shipment_id, created_at) VALUES ($1, $2, now())
    ON CONFLICT (reference) DO NOTHING RETURNING shipment_id
  )
  SELECT shipment_id FROM ins
  UNION ALL
  SELECT shipment_id FROM carrier_shipment_ids WHERE reference = $1 AND NOT EXISTS (SELECT 1 FROM ins)`;

/**
 * In PostgreSQL, on the pool under the app's Prisma client: raw statements, as on the other hot
 * paths (src/db/client.ts). A label costs a lookup and a claim on every order; through Prisma they
 * were three statements and its per-query cost (decision 0209).
 */
export function createPrismaCarrierShipmentIds(db: Database): CarrierShipmentIds {
  const sql = sqlPool(db);
  const read = async (reference: string) =>
    (await sql.query<{ shipment_id: string }>(recordedStatement, [reference])).rows[0]?.shipment_id ?? null;
  return {
    recorded: read,
    async claim(reference, shipmentId) {
      const { rows } = await sql.query<{ shipment_id: string }>(claimStatement, [reference, shipmentId]);
      const winner = rows[0]?.shipment_id ?? (await read(reference));
      if (winner === null) throw new Error(`carrier shipment id for ${reference}: claimed but not found`);
      return winner;
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
