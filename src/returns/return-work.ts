import type { SendEmailResult } from "../notifications/email-sender";
import type { ReturnLabels } from "../shipping/return-labels";
import type { ReturnRecords, ReturnRow, ReturnStatus } from "./return-records";
import { createWorkContext, type ReturnWorkDeps } from "./work/context";
import { createExchangeCheckoutWork } from "./work/exchange-checkout";
import { createExchangeShippingWork } from "./work/exchange-shipping";
import { createSettlementWork } from "./work/settlement";

export * from "./work/keys";
export {
  createWorkContext,
  endedStatuses,
  exchangeLines,
  type ReturnWorkDeps,
  type WorkContext,
} from "./work/context";
export { isDisputed, refundRefusedAsDisputed } from "./work/exchange-charge";
export { handBackUnwanted } from "./work/labels";

/**
 * What process-return's function does itself, beside its steps: the return read fresh, its expiry,
 * the exchange's Checkout payment of the difference (also the Stripe webhook's, through
 * exchange-payment-events.ts) and the failed exchange's notice. The steps' own work (the label,
 * the refund, the restock, the exchange's charge, stock and parcel) is in their step files,
 * src/inngest/steps/*, each with its undo.
 */
export function createReturnRunWork(deps: ReturnWorkDeps) {
  const ctx = createWorkContext(deps);
  return {
    load: (returnId: string): Promise<ReturnRow> => ctx.load(returnId),
    ...createSettlementWork(ctx),
    ...createExchangeShippingWork(ctx),
    ...createExchangeCheckoutWork(ctx),
  };
}

export type ReturnRunWork = ReturnType<typeof createReturnRunWork>;

type EmailStatus = SendEmailResult["status"];
type HandBackStatus = Awaited<ReturnType<ReturnLabels["handBack"]>>;

/** What the exchange charge's undo did: nothing owed, kept (it shipped), refused (disputed), or refunded. */
export type ExchangeChargeRefund =
  | { outcome: "not-charged" }
  | { outcome: "shipped" }
  | { outcome: "disputed" }
  | { outcome: "refunded"; amount: number; refundId: string };

/**
 * The steps' work, one method per side effect, each idempotent by a key you can name (see the step
 * files): the port process-return's steps call, so the fast tier (test/workflow-fast) can stand in
 * for it in memory. src/inngest/steps/return-work.ts builds it from the step files.
 */
export interface ReturnStepWork {
  buyLabel(
    returnId: string,
    runId: string,
  ): Promise<{ trackingNumber: string; created: boolean; handedBack?: string }>;
  handBackLabel(returnId: string, runId: string): Promise<{ outcome: "no-label" | "used" | HandBackStatus }>;
  emailLabel(returnId: string, runId: string): Promise<{ status: EmailStatus | "skipped" }>;
  refund(
    returnId: string,
    runId: string,
  ): Promise<{ amount: number; fee: number; refundId: string | null; withheld?: boolean }>;
  restock(
    returnId: string,
    runId: string,
  ): Promise<{ movements: Awaited<ReturnType<ReturnRecords["restock"]>> }>;
  writeOff(returnId: string, runId: string): Promise<{ writtenOff: boolean }>;
  close(returnId: string, runId: string): Promise<{ status: ReturnStatus }>;
  chargeExchange(
    returnId: string,
    runId: string,
  ): Promise<
    | { outcome: "failed" | "awaiting-payment" | "none" | "ended"; amount: number }
    | { outcome: "charged"; amount: number; paymentIntentId: string | null }
    | { outcome: "refunded"; amount: number; refund: ExchangeChargeRefund }
  >;
  refundExchangeCharge(returnId: string, runId: string): Promise<ExchangeChargeRefund>;
  reserveExchange(
    returnId: string,
    runId: string,
  ): Promise<{ movements: Awaited<ReturnType<ReturnRecords["reserveExchange"]>> }>;
  releaseExchange(
    returnId: string,
    runId: string,
  ): Promise<{ movements: Awaited<ReturnType<ReturnRecords["releaseExchange"]>> }>;
  shipExchange(
    returnId: string,
    runId: string,
  ): Promise<{ trackingNumber: string; created: boolean; handedBack?: string }>;
  emailExchange(returnId: string, runId: string): Promise<{ status: EmailStatus | "skipped" }>;
}

/** Everything process-return touches of a return. */
export type ReturnWork = ReturnRunWork & ReturnStepWork;
