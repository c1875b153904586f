import { sqlPool, type Database } from "../db/client";
import type { InventoryRepository, ProductView, ReservationLine, ReserveOutcome } from "./inventory";

function toView(product: {
  sku: string;
  name: string;
  unitPrice: number;
  currency: string;
  stockOnHand: number;
  digital?: boolean;
  archived?: boolean;
}): ProductView {
  return {
    sku: product.sku,
    name: product.name,
    unitPrice: product.unitPrice,
    currency: product.currency,
    quantityAvailable: product.stockOnHand,
    ...(product.digital ? { digital: true } : {}),
    ...(product.archived ? { archived: true } : {}),
  };
}

interface ReserveRow {
  sku: string;
  requested: number;
  available: number;
  ok: boolean;
  made: number;
  existed: boolean;
  /** False when a guard's claim no longer owns the order (re-driven to another run). */
  owns: boolean;
  /** False when a guarded order is no longer fulfilling or a cancel was requested. */
  open: boolean;
}

export function createPrismaInventoryRepository(db: Database): InventoryRepository {
  const sql = sqlPool(db);
  const existingReservation = async (orderId: string): Promise<ReserveOutcome | undefined> => {
    const existing = await db.stockReservation.findMany({ where: { orderId }, orderBy: { sku: "asc" } });
    if (existing.length === 0) return undefined;
    return { ok: true, reserved: existing.map(({ sku, quantity }) => ({ sku, quantity })) };
  };

  return {
    async listProducts() {
      // What can be bought: an archived product is off sale (sold out ones show 0 available).
      const products = await db.product.findMany({ where: { archivedAt: null }, orderBy: { sku: "asc" } });
      return products.map(toView);
    },

    async findProducts(skus) {
      // Raw pg: every checkout prices its cart here (docs/benchmarks.md).
      const { rows } = await sql.query<Parameters<typeof toView>[0]>(
        `SELECT sku, name, unit_price AS "unitPrice", currency, stock_on_hand AS "stockOnHand", digital,
                archived_at IS NOT NULL AS archived
         FROM products WHERE sku = ANY($1::text[])`,
        [skus],
      );
      return rows.map(toView);
    },

    async reserve(orderId, lines, guard): Promise<ReserveOutcome> {
      // One statement, not an interactive transaction: it needs a connection only while it runs,
      // so a burst of reservations queues for the pool instead of failing Prisma's 2 s limit on
      // starting a transaction. Inside it, the order row is locked first (a cancel's fence or a
      // re-drive either committed before, and is seen, or waits for this statement), then the
      // product rows in SKU order (no deadlock between two orders), read at their latest committed
      // stock; every line is taken, or none.
      const sorted = [...lines].sort((a, b) => a.sku.localeCompare(b.sku));
      const skus = sorted.map((line) => line.sku);
      const quantities = sorted.map((line) => line.quantity);
      const claimId = guard?.claimId ?? null;
      let rows: ReserveRow[];
      try {
        rows = await db.$queryRaw<ReserveRow[]>`
          WITH req AS (
            SELECT sku, quantity FROM unnest(${skus}::text[], ${quantities}::int[]) AS r (sku, quantity)
          ),
          ord AS (
            SELECT claim_id, status::text AS status, cancel_requested_at FROM orders
            WHERE id = ${orderId}::uuid
            FOR UPDATE
          ),
          guarded AS (
            SELECT
              ${claimId}::text IS NULL OR EXISTS (SELECT 1 FROM ord WHERE claim_id = ${claimId}::text) AS owns,
              ${claimId}::text IS NULL OR EXISTS (
                SELECT 1 FROM ord WHERE status = 'fulfilling' AND cancel_requested_at IS NULL
              ) AS open
          ),
          already AS (
            SELECT 1 FROM stock_reservations WHERE order_id = ${orderId}::uuid
          ),
          locked AS (
            SELECT p.sku, p.stock_on_hand FROM products p, guarded g
            WHERE p.sku IN (SELECT sku FROM req) AND NOT EXISTS (SELECT 1 FROM already) AND g.owns AND g.open
            ORDER BY p.sku
            FOR UPDATE OF p
          ),
          verdict AS (
            SELECT NOT EXISTS (SELECT 1 FROM already)
              AND (SELECT owns AND open FROM guarded)
              AND (SELECT count(*) FROM req) = (
                SELECT count(*) FROM locked l JOIN req r USING (sku) WHERE l.stock_on_hand >= r.quantity
              ) AS ok
          ),
          taken AS (
            UPDATE products p
            SET stock_on_hand = p.stock_on_hand - r.quantity, updated_at = now()
            FROM req r, verdict v
            WHERE v.ok AND p.sku = r.sku
            RETURNING p.sku, p.stock_on_hand
          ),
          moved AS (
            INSERT INTO stock_movements (sku, delta, reason, actor, order_id, stock_after)
            SELECT t.sku, -r.quantity, 'reserved', 'fulfilment', ${orderId}::uuid, t.stock_on_hand
            FROM taken t JOIN req r USING (sku)
          ),
          made AS (
            INSERT INTO stock_reservations (order_id, sku, quantity, status, created_at, updated_at)
            SELECT ${orderId}::uuid, r.sku, r.quantity, 'reserved', now(), now()
            FROM req r JOIN taken t USING (sku)
            RETURNING sku
          )
          SELECT r.sku, r.quantity AS requested, coalesce(l.stock_on_hand, 0) AS available,
            (SELECT ok FROM verdict) AS ok,
            (SELECT count(*) FROM made)::int AS made,
            EXISTS (SELECT 1 FROM already) AS existed,
            (SELECT owns FROM guarded) AS owns,
            (SELECT open FROM guarded) AS open
          FROM req r LEFT JOIN locked l USING (sku)
          ORDER BY r.sku`;
      } catch (error) {
        // The same order reserving twice at once: the second statement fails on the reservations'
        // primary key, as a whole, after the first committed. Report the first one's reservation.
        const existing = await existingReservation(orderId);
        if (existing) return existing;
        throw error;
      }
      const first = rows[0];
      if (first && !first.owns) return { ok: false, reason: "superseded" };
      if (first && !first.open) return { ok: false, reason: "cancelled" };
      if (first?.existed) return (await existingReservation(orderId)) ?? { ok: true, reserved: [] };
      if (first?.ok && first.made === sorted.length) return { ok: true, reserved: sorted };
      const short = rows.find((row) => row.available < row.requested) ?? first;
      return {
        ok: false,
        reason: "out_of_stock",
        sku: short?.sku ?? sorted[0]?.sku ?? "",
        requested: short?.requested ?? 0,
        available: short?.available ?? 0,
      };
    },

    async release(orderId): Promise<ReservationLine[]> {
      // One statement: the status flip is the guard (a concurrent release waits for the row and
      // then finds it released), and the stock goes back in the same atomic step.
      const rows = await db.$queryRaw<ReservationLine[]>`
        WITH flipped AS (
          UPDATE stock_reservations
          SET status = 'released', updated_at = now()
          WHERE order_id = ${orderId}::uuid AND status = 'reserved'
          RETURNING sku, quantity
        ),
        returned AS (
          UPDATE products p
          SET stock_on_hand = p.stock_on_hand + f.quantity, updated_at = now()
          FROM flipped f
          WHERE p.sku = f.sku
          RETURNING p.sku, p.stock_on_hand
        ),
        moved AS (
          -- The ledger row for the stock given back (src/inventory/stock-ledger.ts).
          INSERT INTO stock_movements (sku, delta, reason, actor, order_id, stock_after)
          SELECT r.sku, f.quantity, 'released', 'fulfilment', ${orderId}::uuid, r.stock_on_hand
          FROM returned r JOIN flipped f USING (sku)
        )
        SELECT f.sku, f.quantity FROM flipped f JOIN returned r USING (sku) ORDER BY f.sku`;
      return rows.map(({ sku, quantity }) => ({ sku, quantity }));
    },
  };
}
