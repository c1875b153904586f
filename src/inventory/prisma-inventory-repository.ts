import { sqlPool, type Database } from "../db/client";
import { shortUnitsWorth, storedBreakdown } from "../payments/money-breakdown";
import type {
  InventoryRepository,
  ProductView,
  ReservationLine,
  ReserveOutcome,
  ShortLine,
} from "./inventory";

/**
 * The products of `skusParam` (a text[] parameter) as one JSON array of findProducts' columns, for
 * a statement that reads them beside something else (the keyed checkout's lookup): toProductView
 * makes each a ProductView.
 */
export const productsJsonSql = (skusParam: string): string =>
  `COALESCE((SELECT json_agg(json_build_object('sku', p.sku, 'name', p.name, 'unitPrice', p.unit_price,
                     'currency', p.currency, 'stockOnHand', p.stock_on_hand, 'digital', p.digital,
                     'archived', p.archived_at IS NOT NULL, 'taxCode', p.tax_code))
            FROM products p WHERE p.sku = ANY(${skusParam}::text[])), '[]')`;

function toView(product: {
  sku: string;
  name: string;
  unitPrice: number;
  currency: string;
  stockOnHand: number;
  digital?: boolean;
  archived?: boolean;
  taxCode?: string | null;
}): ProductView {
  return {
    sku: product.sku,
    name: product.name,
    unitPrice: product.unitPrice,
    currency: product.currency,
    quantityAvailable: product.stockOnHand,
    ...(product.digital ? { digital: true } : {}),
    ...(product.archived ? { archived: true } : {}),
    ...(product.taxCode ? { taxCode: product.taxCode } : {}),
  };
}

interface ReserveRow {
  sku: string;
  requested: number;
  available: number;
  /** Units this statement takes of the line (the whole quantity unless short stock is allowed). */
  take: number;
  /** The line's unit price, for what its missing units cost. */
  unit_price: number;
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
  /**
   * The short lines' money from Stripe's breakdown when the order has one: a line's last units,
   * price plus tax share less discount share (src/payments/money-breakdown.ts shortUnitsWorth).
   * An order without one keeps unit price × short units, as before.
   */
  const priced = async (orderId: string, short: ShortLine[]): Promise<ShortLine[]> => {
    if (short.length === 0) return short;
    const { rows } = await sql.query<{ money_breakdown: unknown }>(
      "SELECT money_breakdown FROM orders WHERE id = $1::uuid",
      [orderId],
    );
    const money = storedBreakdown(rows[0]?.money_breakdown);
    if (!money) return short;
    return short.map((line) => {
      const recorded = money.lines.find((entry) => entry.sku === line.sku);
      return recorded ? { ...line, amount: shortUnitsWorth(recorded, line.short) } : line;
    });
  };
  const existingReservation = async (orderId: string): Promise<ReserveOutcome | undefined> => {
    const existing = await db.stockReservation.findMany({ where: { orderId }, orderBy: { sku: "asc" } });
    if (existing.length === 0) return undefined;
    // The short lines the first reservation wrote with it (none unless short stock was allowed).
    const shortLines = await db.orderLine.findMany({
      where: { orderId, shortQuantity: { gt: 0 } },
      orderBy: { sku: "asc" },
    });
    const short = await priced(
      orderId,
      shortLines.map((line) => ({
        sku: line.sku,
        requested: line.quantity,
        short: line.shortQuantity,
        amount: line.unitPrice * line.shortQuantity,
      })),
    );
    return {
      ok: true,
      reserved: existing.map(({ sku, quantity }) => ({ sku, quantity })),
      ...(short.length > 0 ? { short } : {}),
    };
  };

  return {
    async listProducts() {
      // What can be bought: an archived product is off sale (sold out ones show 0 available).
      const products = await db.product.findMany({ where: { archivedAt: null }, orderBy: { sku: "asc" } });
      // The storefront's list: what a cart needs; the tax code is checkout's business.
      return products.map((product) => toView({ ...product, taxCode: null }));
    },

    async findProducts(skus) {
      // Raw pg: every checkout prices its cart here (docs/benchmarks.md).
      const { rows } = await sql.query<Parameters<typeof toView>[0]>(
        `SELECT sku, name, unit_price AS "unitPrice", currency, stock_on_hand AS "stockOnHand", digital,
                archived_at IS NOT NULL AS archived, tax_code AS "taxCode"
         FROM products WHERE sku = ANY($1::text[])`,
        [skus],
      );
      return rows.map(toView);
    },

    async reserve(orderId, lines, guard, options): Promise<ReserveOutcome> {
      // One statement, not an interactive transaction: it needs a connection only while it runs,
      // so a burst of reservations queues for the pool instead of failing Prisma's 2 s limit on
      // starting a transaction. Inside it, the order row is locked first (a cancel's fence or a
      // re-drive either committed before, and is seen, or waits for this statement), then the
      // product rows in SKU order (no deadlock between two orders), read at their latest committed
      // stock; every line is taken, or none. With allowShort, each line takes what is on hand up
      // to its quantity (at least one line something), and the order lines record what is
      // missing in the same statement, so the answer is durable with the stock it took.
      const sorted = [...lines].sort((a, b) => a.sku.localeCompare(b.sku));
      const skus = sorted.map((line) => line.sku);
      const quantities = sorted.map((line) => line.quantity);
      const claimId = guard?.claimId ?? null;
      const allowShort = options?.allowShort === true;
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
          plan AS (
            SELECT r.sku, r.quantity,
              CASE WHEN ${allowShort}::boolean THEN least(coalesce(l.stock_on_hand, 0), r.quantity)
                   ELSE r.quantity END AS take
            FROM req r LEFT JOIN locked l USING (sku)
          ),
          verdict AS (
            SELECT NOT EXISTS (SELECT 1 FROM already)
              AND (SELECT owns AND open FROM guarded)
              AND CASE WHEN ${allowShort}::boolean
                THEN EXISTS (SELECT 1 FROM plan WHERE take > 0)
                ELSE (SELECT count(*) FROM req) = (
                  SELECT count(*) FROM locked l JOIN req r USING (sku) WHERE l.stock_on_hand >= r.quantity
                ) END AS ok
          ),
          taken AS (
            UPDATE products p
            SET stock_on_hand = p.stock_on_hand - pl.take, updated_at = now()
            FROM plan pl, verdict v
            WHERE v.ok AND p.sku = pl.sku AND pl.take > 0
            RETURNING p.sku, p.stock_on_hand
          ),
          moved AS (
            INSERT INTO stock_movements (sku, delta, reason, actor, order_id, stock_after)
            SELECT t.sku, -pl.take, 'reserved', 'fulfilment', ${orderId}::uuid, t.stock_on_hand
            FROM taken t JOIN plan pl USING (sku)
          ),
          made AS (
            INSERT INTO stock_reservations (order_id, sku, quantity, status, created_at, updated_at)
            SELECT ${orderId}::uuid, pl.sku, pl.take, 'reserved', now(), now()
            FROM plan pl JOIN taken t USING (sku)
            RETURNING sku
          ),
          shorted AS (
            UPDATE order_lines ol SET short_quantity = pl.quantity - pl.take
            FROM plan pl, verdict v
            WHERE v.ok AND ol.order_id = ${orderId}::uuid AND ol.sku = pl.sku AND pl.take < pl.quantity
            RETURNING ol.sku
          )
          SELECT r.sku, r.quantity AS requested, coalesce(l.stock_on_hand, 0) AS available,
            pl.take,
            coalesce((SELECT ol.unit_price FROM order_lines ol
                      WHERE ol.order_id = ${orderId}::uuid AND ol.sku = r.sku), 0) AS unit_price,
            (SELECT ok FROM verdict) AS ok,
            (SELECT count(*) FROM made)::int AS made,
            EXISTS (SELECT 1 FROM already) AS existed,
            (SELECT owns FROM guarded) AS owns,
            (SELECT open FROM guarded) AS open
          FROM req r LEFT JOIN locked l USING (sku) JOIN plan pl USING (sku)
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
      if (first?.ok && !allowShort && first.made === sorted.length) return { ok: true, reserved: sorted };
      if (first?.ok && allowShort) {
        const short = await priced(
          orderId,
          rows
            .filter((row) => row.take < row.requested)
            .map((row) => ({
              sku: row.sku,
              requested: row.requested,
              short: row.requested - row.take,
              amount: row.unit_price * (row.requested - row.take),
            })),
        );
        return {
          ok: true,
          reserved: rows.filter((row) => row.take > 0).map((row) => ({ sku: row.sku, quantity: row.take })),
          ...(short.length > 0 ? { short } : {}),
        };
      }
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

/** findProducts' row to a ProductView, for statements that read products beside something else. */
export { toView as toProductView };
