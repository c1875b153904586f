import type { ReturnRow } from "./return-records";
import { createWorkContext, type ReturnWorkDeps } from "./work/context";
import { createExchangeChargeWork } from "./work/exchange-charge";
import { createExchangeCheckoutWork } from "./work/exchange-checkout";
import { createExchangeShippingWork } from "./work/exchange-shipping";
import { createLabelWork } from "./work/labels";
import { createSettlementWork } from "./work/settlement";

export * from "./work/keys";
export type { ReturnWorkDeps } from "./work/context";

/**
 * What process-return's steps do, one method per side effect, each idempotent by a key you can
 * name: the label by its reference `return-<returnId>` (and the recorded tracking number), the
 * e-mail by `return-label-<returnId>`, the refund by its row id, the return's own id (Stripe key
 * `refund-<returnId>`), the restock and write-off by the return's `restocked_at`/`written_off_at`.
 */
export function createReturnWork(deps: ReturnWorkDeps) {
  const ctx = createWorkContext(deps);
  return {
    load: (returnId: string): Promise<ReturnRow> => ctx.load(returnId),
    ...createLabelWork(ctx),
    ...createSettlementWork(ctx),
    ...createExchangeChargeWork(ctx),
    ...createExchangeShippingWork(ctx),
    ...createExchangeCheckoutWork(ctx),
  };
}

export type ReturnWork = ReturnType<typeof createReturnWork>;
