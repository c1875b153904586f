import type { Alerter } from "../alerts";
import { sqlPool, type Database } from "../db/client";

export interface LowStockCrossing {
  sku: string;
  name: string;
  stockOnHand: number;
  threshold: number;
}

export interface LowStockWatch {
  /**
   * Alerts ops once for each product whose stock fell to its threshold since the last look, and
   * re-arms the products that recovered above it (or lost their threshold). Safe to call from
   * any number of places at once: each crossing is claimed by one conditional UPDATE.
   */
  check(): Promise<{ alerted: LowStockCrossing[]; recovered: string[] }>;
}

/**
 * Low stock as a mark on the product (`low_stock_alerted_at`), not a check inside the hot
 * statements: checkout's and the reservation's statement counts stay as they are, and the cron
 * (src/inngest/functions/watch-low-stock.ts) with the admin's own stock changes call check().
 * The mark is set before the alert goes out, so a crash between the two loses that one alert
 * rather than sending it twice (Alerter delivery is best effort anyway).
 */
export function createLowStockWatch(
  db: Database,
  deps: { alerts: Alerter; opsProductUrl?: (sku: string) => string },
): LowStockWatch {
  const sql = sqlPool(db);
  return {
    async check() {
      const { rows } = await sql.query<{
        kind: "crossed" | "recovered";
        sku: string;
        name: string;
        stock_on_hand: number;
        threshold: number | null;
      }>(
        `WITH crossed AS (
          UPDATE products SET low_stock_alerted_at = now()
          WHERE low_stock_threshold IS NOT NULL AND stock_on_hand <= low_stock_threshold
            AND low_stock_alerted_at IS NULL AND archived_at IS NULL
          RETURNING sku, name, stock_on_hand, low_stock_threshold
        ),
        recovered AS (
          UPDATE products SET low_stock_alerted_at = NULL
          WHERE low_stock_alerted_at IS NOT NULL
            AND (low_stock_threshold IS NULL OR stock_on_hand > low_stock_threshold)
          RETURNING sku, name, stock_on_hand, low_stock_threshold
        )
        SELECT 'crossed' AS kind, sku, name, stock_on_hand, low_stock_threshold AS threshold FROM crossed
        UNION ALL
        SELECT 'recovered', sku, name, stock_on_hand, low_stock_threshold FROM recovered
        ORDER BY sku`,
      );
      const alerted = rows
        .filter((row) => row.kind === "crossed")
        .map((row) => ({
          sku: row.sku,
          name: row.name,
          stockOnHand: row.stock_on_hand,
          threshold: row.threshold ?? 0,
        }));
      for (const product of alerted) {
        await deps.alerts.notify({
          title: `Low stock: ${product.name}`,
          fields: {
            sku: product.sku,
            stockOnHand: product.stockOnHand,
            threshold: product.threshold,
            ...(deps.opsProductUrl ? { productPage: deps.opsProductUrl(product.sku) } : {}),
            action: "Order more, or receive the delivery in the ops console (stock page)",
          },
        });
      }
      return { alerted, recovered: rows.filter((row) => row.kind === "recovered").map((row) => row.sku) };
    },
  };
}
