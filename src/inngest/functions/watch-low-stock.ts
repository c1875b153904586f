import type { Inngest } from "inngest";
import type { LowStockWatch } from "../../inventory/low-stock";

export const watchLowStockFunctionId = "watch-low-stock";
export const watchLowStockCron = "* * * * *";

/**
 * Looks for products that fell to their low-stock threshold (checkouts take stock without
 * looking: their statements stay as cheap as they are) and alerts ops once per crossing; a
 * product that recovered is re-armed. The crossing is claimed by a conditional UPDATE, so a
 * retried step alerts nothing twice (src/inventory/low-stock.ts).
 */
export function createWatchLowStock(inngest: Inngest, lowStock: LowStockWatch) {
  return inngest.createFunction(
    {
      id: watchLowStockFunctionId,
      name: "Alert ops about products low on stock",
      triggers: [{ cron: watchLowStockCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step }) => {
      const { alerted, recovered } = await step.run("check-low-stock", () => lowStock.check());
      return { alerted: alerted.length, recovered: recovered.length };
    },
  );
}
