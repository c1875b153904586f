import type { Inngest } from "inngest";
import type { Alerter } from "../../alerts";
import { reportLedgerMismatches, type StockLedger } from "../../inventory/stock-ledger";

export const checkStockLedgerFunctionId = "check-stock-ledger";
export const checkStockLedgerCron = "17 4 * * *";

/**
 * Once a day, the stock ledger's reconciliation: stock on hand must be the sum of each product's
 * movements; ops are alerted about any product where it is not (src/inventory/stock-ledger.ts).
 */
export function createCheckStockLedger(
  inngest: Inngest,
  ledger: Pick<StockLedger, "mismatches">,
  alerts: Pick<Alerter, "notify">,
) {
  return inngest.createFunction(
    {
      id: checkStockLedgerFunctionId,
      name: "Check that stock on hand is the sum of the stock ledger",
      triggers: [{ cron: checkStockLedgerCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step }) => {
      const mismatches = await step.run("check-stock-ledger", () => reportLedgerMismatches(ledger, alerts));
      return { mismatches: mismatches.length };
    },
  );
}
