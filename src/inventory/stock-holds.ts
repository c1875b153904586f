import { timelineKindSql } from "../timeline/kinds";
import { sqlPool, type Database, type Prisma } from "../db/client";
import type { OrderStatus } from "../generated/prisma/enums";
import { recordInTransaction } from "../timeline/in-transaction";
import type { ReservationLine, ReserveOutcome, ShortLine } from "./inventory";

/**
 * Stock held at checkout. `stock_on_hand` is what nobody holds or reserves:
 * a hold takes the units from it when the Checkout Session is created, so two customers can
 * never both be offered the last unit. A hold ends exactly once, by a conditional status change:
 * `converted` into the order's reservation by the fulfilment run (no stock moves), or `released`
 * (stock comes back) when the session expires, the payment fails or the sweep finds it stale.
 */

export class HoldOutOfStock extends Error {
  constructor(
    readonly sku: string,
    readonly requested: number,
    readonly available: number,
  ) {
    super(`out of stock: ${sku}`);
    this.name = "HoldOutOfStock";
  }
}

/**
 * Takes the stock for every line inside the caller's transaction, or throws HoldOutOfStock so
 * that the whole transaction rolls back. Product rows are locked in one order (sorted by SKU), so
 * two checkouts never deadlock; call it late in the transaction, so that the locks are held
 * briefly. Checkout itself now takes stock and records holds in its one statement
 * (checkout-repository.ts); these two remain for a caller holding a Prisma transaction.
 */
export async function takeStockForHold(
  tx: Prisma.TransactionClient,
  lines: readonly ReservationLine[],
  orderId?: string,
): Promise<void> {
  for (const line of [...lines].sort((a, b) => a.sku.localeCompare(b.sku))) {
    // The conditional decrement is the guard; the CHECK (stock_on_hand >= 0) is the backstop.
    // Its ledger row is written by the same statement (src/inventory/stock-ledger.ts).
    const taken = await tx.$executeRaw`
      WITH taken AS (
        UPDATE products SET stock_on_hand = stock_on_hand - ${line.quantity}, updated_at = now()
        WHERE sku = ${line.sku} AND stock_on_hand >= ${line.quantity}
        RETURNING sku, stock_on_hand
      )
      INSERT INTO stock_movements (sku, delta, reason, actor, order_id, stock_after)
      SELECT sku, ${-line.quantity}::int, 'reserved', 'checkout', ${orderId ?? null}::uuid, stock_on_hand FROM taken`;
    if (taken === 0) {
      const product = await tx.product.findUnique({ where: { sku: line.sku } });
      throw new HoldOutOfStock(line.sku, line.quantity, product?.stockOnHand ?? 0);
    }
  }
}

/** Records the hold for stock `takeStockForHold` took, once the order row exists. */
export async function recordHolds(
  tx: Prisma.TransactionClient,
  orderId: string,
  lines: readonly ReservationLine[],
  expiresAt: Date,
): Promise<void> {
  await tx.stockHold.createMany({
    data: lines.map((line) => ({ orderId, sku: line.sku, quantity: line.quantity, expiresAt })),
  });
}

/**
 * Gives the order's held stock back inside the caller's transaction. Conditional on `held`, so
 * two concurrent releases (or a release racing a conversion) return the units once.
 */
export async function releaseHolds(
  tx: Prisma.TransactionClient,
  orderId: string,
  reason?: string,
): Promise<ReservationLine[]> {
  const released = await tx.$queryRaw<ReservationLine[]>`
    UPDATE stock_holds SET status = 'released', updated_at = now()
    WHERE order_id = ${orderId}::uuid AND status = 'held'
    RETURNING sku, quantity`;
  const sorted = [...released].sort((a, b) => a.sku.localeCompare(b.sku));
  for (const line of sorted) {
    await tx.$executeRaw`
      WITH returned AS (
        UPDATE products SET stock_on_hand = stock_on_hand + ${line.quantity}, updated_at = now()
        WHERE sku = ${line.sku}
        RETURNING sku, stock_on_hand
      )
      INSERT INTO stock_movements (sku, delta, reason, actor, order_id, note, stock_after)
      SELECT sku, ${line.quantity}::int, 'released', 'checkout', ${orderId}::uuid, ${reason ?? null}::text, stock_on_hand
      FROM returned`;
  }
  if (reason !== undefined && sorted.length > 0) {
    await recordInTransaction(tx, orderId, "stock-hold-released", {
      reason,
      released: sorted.map(({ sku, quantity }) => ({ sku, quantity })),
    });
  }
  return sorted;
}

/** Order statuses in which a hold is still wanted: the session may be paid, or is paid. */
export const liveHoldStatuses: readonly OrderStatus[] = [
  "pending",
  "payment_processing",
  "authorized",
  "paid",
  "fulfilling",
];

export interface StaleHold {
  orderId: string;
  status: OrderStatus;
  checkoutSessionId: string | null;
  expiresAt: Date;
}

export interface StockHolds {
  /**
   * Turns the order's hold into its reservation, in one transaction under the order's row lock
   * (the lock `reserve` takes too). Returns the existing reservation when there already is one,
   * and null when there is no hold left to convert (none was placed, or it was released).
   */
  convert(orderId: string, record?: { runId: string }): Promise<(ReserveOutcome & EntriesRecorded) | null>;
  /**
   * Gives held stock back; repeating it releases nothing more. Returns the lines released now;
   * with a reason, the order's timeline says why (`stock-hold-released`).
   */
  release(orderId: string, reason?: string): Promise<ReservationLine[]>;
  /**
   * Orders holding stock they should not: their order left the live statuses (expired, failed,
   * cancelled), or it is still pending with the session's `expires_at` older than `expiredBefore`.
   */
  findStale(options: { expiredBefore: Date; limit: number }): Promise<StaleHold[]>;
  /** What the order holds now (all statuses), for tests and the ops view. */
  list(orderId: string): Promise<{ sku: string; quantity: number; status: string }[]>;
}

/**
 * With `record`, `convert`'s statement also writes the run's `stock-reserved` entry (and
 * `lines-short` when lines are short) from the outcome it returns, once per (order, kind, run) as
 * every entry; `entriesRecorded` says it did (absent: the caller records them).
 */
export interface EntriesRecorded {
  entriesRecorded?: true;
}

/** A row of `convert`: a reservation line (`short` 0), or a short order line (its quantity ordered). */
interface ConvertRow {
  sku: string;
  quantity: number;
  short: number;
  unit_price: number;
}

/** The order's short lines (partial fulfilment), as ConvertRows; `$1` is the order id. */
const shortLinesSql = `SELECT sku, quantity, short_quantity AS short, unit_price FROM order_lines
        WHERE order_id = $1::uuid AND short_quantity > 0`;

export function createStockHolds(db: Database): StockHolds {
  const sql = sqlPool(db);
  return {
    async convert(orderId, record) {
      // One statement (a hot workflow step: docs/benchmarks.md): the order row locked first, then
      // the holds flipped to `converted` (conditional on `held`, so a sweep releasing the same hold
      // concurrently wins or loses whole) and the reservation made from them, unless the order
      // already has one. The statement reads reservations as of its start, so a concurrent convert
      // that committed while this one waited for the lock leaves it nothing to convert and nothing
      // seen: only then is the reservation read again, afresh. An existing reservation comes with
      // the short lines its reservation wrote (partial fulfilment), so a repeat answers the same.
      const { rows } = await sql.query<ConvertRow>(
        `WITH ord AS (SELECT id FROM orders WHERE id = $1::uuid FOR UPDATE),
        existing AS (SELECT sku, quantity FROM stock_reservations WHERE order_id = $1::uuid),
        converted AS (
          UPDATE stock_holds h SET status = 'converted', updated_at = now()
          FROM ord
          WHERE h.order_id = ord.id AND h.status = 'held' AND NOT EXISTS (SELECT 1 FROM existing)
          RETURNING h.sku, h.quantity
        ),
        made AS (
          -- The units already left stock_on_hand with the hold: the reservation takes them over.
          INSERT INTO stock_reservations (order_id, sku, quantity, status, created_at, updated_at)
          SELECT $1::uuid, sku, quantity, 'reserved', now(), now() FROM converted
        ),
        found AS (
          SELECT sku, quantity, 0 AS short, 0 AS unit_price FROM existing
          UNION ALL
          SELECT sku, quantity, 0 AS short, 0 AS unit_price FROM converted
          UNION ALL
          ${shortLinesSql} AND EXISTS (SELECT 1 FROM existing)
        ),
        -- The entries the step would write from the outcome below, built from the same rows.
        outcome AS (
          SELECT (SELECT jsonb_agg(jsonb_build_object('sku', sku, 'quantity', quantity) ORDER BY sku)
                  FROM found WHERE short = 0) AS reserved,
                 (SELECT jsonb_agg(jsonb_build_object('sku', sku, 'requested', quantity, 'short', short,
                                                      'amount', unit_price * short) ORDER BY sku)
                  FROM found WHERE short > 0) AS short
        ),
        entries AS (
          INSERT INTO order_timeline (order_id, kind, detail, run_id)
          SELECT $1::uuid, e.kind, e.detail, $2::text
          FROM outcome,
               LATERAL (VALUES
                 (${timelineKindSql("stock-reserved")}, jsonb_build_object('ok', true, 'reserved', outcome.reserved)
                    || CASE WHEN outcome.short IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('short', outcome.short) END),
                 (${timelineKindSql("lines-short")}, CASE WHEN outcome.short IS NULL THEN NULL
                    ELSE jsonb_build_object('short', outcome.short, 'reserved', outcome.reserved) END)
               ) AS e (kind, detail)
          WHERE $2::text IS NOT NULL AND outcome.reserved IS NOT NULL AND e.detail IS NOT NULL
          ON CONFLICT DO NOTHING
        )
        SELECT * FROM found ORDER BY sku`,
        [orderId, record?.runId ?? null],
      );
      const answered = rows.some((row) => row.short === 0);
      const found = answered
        ? rows
        : (
            await sql.query<ConvertRow>(
              `SELECT sku, quantity, 0 AS short, 0 AS unit_price FROM stock_reservations
                 WHERE order_id = $1::uuid
                 UNION ALL
                 ${shortLinesSql}
                 ORDER BY sku`,
              [orderId],
            )
          ).rows;
      const reserved = found.filter((row) => row.short === 0);
      if (reserved.length === 0) return null;
      const short: ShortLine[] = found
        .filter((row) => row.short > 0)
        .map((row) => ({
          sku: row.sku,
          requested: row.quantity,
          short: row.short,
          amount: row.unit_price * row.short,
        }));
      return {
        ok: true,
        reserved: reserved.map(({ sku, quantity }) => ({ sku, quantity })),
        ...(short.length > 0 ? { short } : {}),
        ...(record && answered ? { entriesRecorded: true as const } : {}),
      };
    },

    async release(orderId, reason) {
      return db.$transaction((tx) => releaseHolds(tx, orderId, reason));
    },

    async findStale({ expiredBefore, limit }) {
      const rows = await db.$queryRaw<
        { order_id: string; status: OrderStatus; checkout_session_id: string | null; expires_at: Date }[]
      >`
        SELECT o.id AS order_id, o.status, o.checkout_session_id, min(h.expires_at) AS expires_at
        FROM stock_holds h JOIN orders o ON o.id = h.order_id
        WHERE h.status = 'held'
          AND (o.status <> ALL(${[...liveHoldStatuses]}::order_status[])
               OR (o.status = 'pending' AND h.expires_at < ${expiredBefore}))
        GROUP BY o.id, o.status, o.checkout_session_id
        ORDER BY min(h.expires_at)
        LIMIT ${limit}`;
      return rows.map((row) => ({
        orderId: row.order_id,
        status: row.status,
        checkoutSessionId: row.checkout_session_id,
        expiresAt: row.expires_at,
      }));
    },

    async list(orderId) {
      const holds = await db.stockHold.findMany({ where: { orderId }, orderBy: { sku: "asc" } });
      return holds.map(({ sku, quantity, status }) => ({ sku, quantity, status }));
    },
  };
}
