import type { Inngest } from "inngest";
import { stockLow } from "../../events/contracts";
import type { LowStockWatch } from "../../inventory/low-stock";

export const watchLowStockFunctionId = "watch-low-stock";
/**
 * The safety net only, once a day: a checkout that takes a product to its threshold says so
 * (`shop/stock.low`), and the admin's own stock changes call check() themselves. What is left for
 * this run: stock taken by another path (a return written off, say), or an event that did not go.
 */
export const watchLowStockCron = "23 5 * * *";

/**
 * Alerts ops once per crossing about products that fell to their low-stock threshold, and re-arms
 * the products that recovered. The crossing is claimed by a conditional UPDATE, so a retried step,
 * two checkouts' events or the cron overlapping an event's run alert nothing twice
 * (src/inventory/low-stock.ts).
 */
export function createWatchLowStock(inngest: Inngest, lowStock: LowStockWatch) {
  return inngest.createFunction(
    {
      id: watchLowStockFunctionId,
      name: "Alert ops about products low on stock",
      triggers: [stockLow, { cron: watchLowStockCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step }) => {
      const { alerted, recovered } = await step.run("check-low-stock", () => lowStock.check());
      return { alerted: alerted.length, recovered: recovered.length };
    },
  );
}
