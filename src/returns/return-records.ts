import type { Database } from "../db/client";
import { createRecordsContext } from "./records/context";
import { createExchangePaymentRecords, createExchangeRecords } from "./records/exchange";
import { createLabelRecords } from "./records/labels";
import { createReturnQueries } from "./records/queries";
import { createReturnRequests } from "./records/request";
import { createSettlementRecords } from "./records/settlement";

export * from "./records/rows";

/**
 * The returns' writes, raw pg: each needs what Prisma's model API cannot say in one statement (the
 * order's row lock while the quantities are checked, a conditional UPDATE … RETURNING that moves a
 * return once, the restock that writes its stock movements in the statement that moves the stock,
 * as decision 0070 asks of every writer of stock). One module per record: the request, the
 * labels, the settlement, the exchange, and the reads.
 */
export function createReturnRecords(db: Database) {
  const ctx = createRecordsContext(db);
  return {
    ...createReturnQueries(ctx),
    ...createReturnRequests(ctx),
    ...createLabelRecords(ctx),
    ...createSettlementRecords(ctx),
    ...createExchangeRecords(ctx),
    ...createExchangePaymentRecords(ctx),
  };
}

export type ReturnRecords = ReturnType<typeof createReturnRecords>;
