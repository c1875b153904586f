import { isAppError } from "../../errors";
import { disputedRefundAlertKey } from "../../orders/disputed-amount";
import type { ReturnRow } from "../return-records";
import type { WorkContext } from "./context";

/**
 * The exchange's own payment is charged back: Stripe refuses its refund, and the cardholder gets
 * the money through the dispute. Said on the timeline and to ops once per payment; nothing retried.
 */
export async function refundRefusedAsDisputed(
  ctx: WorkContext,
  row: ReturnRow,
  paymentIntentId: string,
  runId: string | null,
) {
  const { deps, timeline } = ctx;
  await timeline.record(
    row.order_id,
    "return-refund-withheld",
    { returnId: row.id, paymentIntentId, exchange: true, reason: "charge_disputed" },
    runId ?? undefined,
  );
  await deps.alerts.notify({
    key: disputedRefundAlertKey(paymentIntentId),
    title: "Refund refused: the payment is disputed",
    fields: {
      orderId: row.order_id,
      returnId: row.id,
      paymentIntentId,
      action:
        "The exchange's payment is charged back: refund nothing outside the dispute; answer or accept it in the Stripe Dashboard, then close the return",
    },
  });
  return { outcome: "disputed" as const };
}
export const isDisputed = (error: unknown) => isAppError(error) && error.code === "charge_disputed";
