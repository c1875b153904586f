import type pg from "pg";
import type { Alerter } from "../alerts";
import { sqlPool, type Database } from "../db/client";
import { AppError } from "../errors";
import type { StockMovement, StockReason } from "./product-schemas";

/**
 * The stock ledger: every change of `products.stock_on_hand` is a `stock_movements` row written
 * by the statement that changes it, so the stock on hand of a SKU is always the sum of its
 * movements. Checkout's hold (checkout-repository.ts), the workflow's reserve and release
 * (prisma-inventory-repository.ts) and the hold releases (stock-holds.ts) each add their row in
 * a CTE of their one statement; this file writes the movements people make (received, adjusted,
 * counted, returned, written-off) and reads the ledger.
 *
 * Raw pg, one statement each: a change needs the product's row lock (the lock checkout and the
 * reservation take), which Prisma's model API cannot say.
 */

export interface StockChange {
  sku: string;
  /** Exactly one of delta and count. A count records the difference to what is on hand now. */
  delta?: number;
  count?: number;
  reason: StockReason;
  note?: string | undefined;
  /** Who: admin-api, ops-console, csv-import. */
  actor: string;
}

export interface LedgerMismatch {
  sku: string;
  stockOnHand: number;
  ledgerSum: number;
}

export interface StockLedger {
  /** Applies the change under the product's row lock; refuses (409) one that would go below zero. */
  record(change: StockChange): Promise<StockMovement>;
  /** Newest first; `before` is the previous page's nextCursor. */
  page(
    sku: string,
    options: { limit: number; before?: string },
  ): Promise<{
    movements: StockMovement[];
    nextCursor: string | null;
  }>;
  /** Products whose stock on hand is not the sum of their movements: empty, always (a check for reconciliation). */
  mismatches(): Promise<LedgerMismatch[]>;
}

interface MovementRow {
  id: string;
  sku: string;
  delta: number;
  reason: StockReason;
  actor: string;
  order_id: string | null;
  note: string | null;
  stock_after: number;
  created_at: Date;
}

const toMovement = (row: MovementRow): StockMovement => ({
  id: String(row.id),
  sku: row.sku,
  delta: row.delta,
  reason: row.reason,
  actor: row.actor,
  orderId: row.order_id,
  note: row.note,
  stockAfter: row.stock_after,
  createdAt: row.created_at.toISOString(),
});

/** Something that runs a query: the pool, or a client inside the caller's transaction (the CSV import). */
export type Queryable = Pick<pg.PoolClient, "query">;

/** StockLedger.record on the given connection: the row lock, the new stock and its movement in one statement. */
export async function recordMovement(sql: Queryable, change: StockChange): Promise<StockMovement> {
  // The row lock first (a checkout or reservation holding it is waited for, and its committed
  // stock read afresh), then the new stock and its movement from that one reading: a count
  // taken while orders reserve never overwrites a reservation, it records the difference.
  const { rows } = await sql.query<{ found: boolean; before: number; after: number } & Partial<MovementRow>>(
    `WITH locked AS (
      SELECT sku, stock_on_hand FROM products WHERE sku = $1 FOR UPDATE
    ),
    next AS (
      SELECT sku, stock_on_hand AS before,
             COALESCE($2::int, stock_on_hand + $3::int) AS after
      FROM locked
    ),
    changed AS (
      UPDATE products p SET stock_on_hand = n.after, updated_at = now()
      FROM next n WHERE p.sku = n.sku AND n.after >= 0
      RETURNING p.sku, p.stock_on_hand
    ),
    moved AS (
      INSERT INTO stock_movements (sku, delta, reason, actor, note, stock_after)
      SELECT c.sku, n.after - n.before, $4::stock_movement_reason, $5, $6, c.stock_on_hand
      FROM changed c JOIN next n USING (sku)
      RETURNING id, sku, delta, reason, actor, order_id, note, stock_after, created_at
    )
    SELECT true AS found, n.before, n.after, m.id, m.sku, m.delta, m.reason, m.actor, m.order_id,
           m.note, m.stock_after, m.created_at
    FROM next n LEFT JOIN moved m ON true`,
    [change.sku, change.count ?? null, change.delta ?? 0, change.reason, change.actor, change.note ?? null],
  );
  const row = rows[0];
  if (!row) throw new AppError("product_not_found", `Product ${change.sku} does not exist`);
  if (row.id === undefined || row.id === null) {
    throw new AppError(
      "insufficient_stock",
      `Product ${change.sku} has ${row.before} on hand: taking ${row.before - row.after} would go below zero`,
      { details: { sku: change.sku, stockOnHand: row.before, delta: row.after - row.before } },
    );
  }
  return toMovement(row as MovementRow);
}

export function createStockLedger(db: Database): StockLedger {
  const sql = sqlPool(db);
  return {
    record: (change) => recordMovement(sql, change),

    async page(sku, { limit, before }) {
      const { rows } = await sql.query<MovementRow>(
        `SELECT id, sku, delta, reason, actor, order_id, note, stock_after, created_at
         FROM stock_movements
         WHERE sku = $1 AND ($2::bigint IS NULL OR id < $2::bigint)
         ORDER BY id DESC LIMIT $3`,
        [sku, before ?? null, limit + 1],
      );
      const page = rows.slice(0, limit).map(toMovement);
      return { movements: page, nextCursor: rows.length > limit ? (page.at(-1)?.id ?? null) : null };
    },

    async mismatches() {
      const { rows } = await sql.query<{ sku: string; stock_on_hand: number; ledger_sum: number }>(
        `SELECT p.sku, p.stock_on_hand, COALESCE(m.total, 0)::int AS ledger_sum
         FROM products p
         LEFT JOIN (SELECT sku, sum(delta) AS total FROM stock_movements GROUP BY sku) m USING (sku)
         WHERE p.stock_on_hand <> COALESCE(m.total, 0)
         ORDER BY p.sku`,
      );
      return rows.map((row) => ({ sku: row.sku, stockOnHand: row.stock_on_hand, ledgerSum: row.ledger_sum }));
    },
  };
}

/**
 * The ledger's reconciliation: ops are told about every product whose stock on hand is not the
 * sum of its movements (a writer that changed stock without its row, or SQL by hand). Returns them.
 */
export async function reportLedgerMismatches(
  ledger: Pick<StockLedger, "mismatches">,
  alerts: Pick<Alerter, "notify">,
): Promise<LedgerMismatch[]> {
  const mismatches = await ledger.mismatches();
  if (mismatches.length > 0) {
    await alerts.notify({
      title: `Stock ledger: ${mismatches.length} product(s) whose stock is not the sum of their movements`,
      fields: {
        products: mismatches
          .slice(0, 20)
          .map((m) => `${m.sku}: ${m.stockOnHand} on hand, ledger ${m.ledgerSum}`)
          .join("; "),
        action:
          "Stock was changed outside the service (SQL by hand, or a writer without its ledger row): find and stop it. A count does not close the gap (it records the difference to what is on hand)",
      },
    });
  }
  return mismatches;
}
