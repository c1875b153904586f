import type { PaymentSettlement } from "../../notifications/customer-messages";
import type { OrderStatus } from "../../orders/order-repository";
import type { TimelineKind } from "../../timeline/kinds";
import type { StepContext } from "./context";

/** How an order that will not be fulfilled ends. */
export type Unfulfilled =
  | { status: "cancelled"; reason: string }
  | { status: "cancelled_out_of_stock"; sku: string }
  | { status: "payment_failed"; error: string };

type EndStatus = Unfulfilled["status"];

const ends: Record<EndStatus, { markStepId: string; sendStepId: string; kind: TimelineKind }> = {
  cancelled: { markStepId: "mark-cancelled", sendStepId: "send-cancelled", kind: "cancelled" },
  cancelled_out_of_stock: {
    markStepId: "mark-out-of-stock",
    sendStepId: "send-out-of-stock",
    kind: "cancelled-out-of-stock",
  },
  payment_failed: {
    markStepId: "mark-payment-failed",
    sendStepId: "send-payment-failed",
    kind: "payment-failed",
  },
};

/** Statuses an order may end from; shipped orders and ended ones are never moved again. */
const openStatuses: readonly OrderStatus[] = [
  "pending",
  "payment_processing",
  "authorized",
  "paid",
  "fulfilling",
];

function isEndStatus(status: OrderStatus | undefined): status is EndStatus {
  return status !== undefined && status in ends;
}

function fromDetail(status: EndStatus, detail: Record<string, unknown>): Unfulfilled {
  if (status === "cancelled_out_of_stock") return { status, sku: String(detail.sku ?? "") };
  if (status === "payment_failed") return { status, error: String(detail.error ?? "") };
  return { status, reason: String(detail.reason ?? "") };
}

/**
 * Ends the order as `outcome` says and tells the customer, once. One guarded transition decides
 * the end: when the cancel cleanup and the fulfilment's own compensation race, the first wins and
 * the other adopts its outcome (from its timeline entry), so the customer gets exactly the one
 * e-mail of the status the order really ended in. Marked before the e-mail: a run cancelled in
 * between leaves the e-mail to the cleanup, which sends it for the status it finds.
 */
export async function finishUnfulfilled(
  { step, deps, orderId, runId }: StepContext,
  outcome: Unfulfilled,
  settlement: PaymentSettlement,
  options: { fromShipped?: boolean } = {},
) {
  // A shipped order ends too once its label was handed back (the parcel never left).
  const from = options.fromShipped ? [...openStatuses, "shipped" as const] : openStatuses;
  const ended = await step.run(ends[outcome.status].markStepId, async (): Promise<Unfulfilled | null> => {
    if (await deps.orders.transition(orderId, from, outcome.status)) {
      await deps.timeline.record(orderId, ends[outcome.status].kind, { ...outcome, settlement }, runId);
      return outcome;
    }
    const status = (await deps.orders.findForFulfilment(orderId))?.status;
    if (!isEndStatus(status)) return null;
    const entries = await deps.timeline.list(orderId);
    const entry = entries.filter((candidate) => candidate.kind === ends[status].kind).at(-1);
    return fromDetail(status, entry?.detail ?? {});
  });
  if (!ended) return null;
  await step.run(ends[ended.status].sendStepId, () => {
    if (ended.status === "cancelled_out_of_stock")
      return deps.messages.outOfStock(orderId, ended.sku, settlement);
    if (ended.status === "payment_failed") return deps.messages.paymentFailed(orderId, ended.error);
    return deps.messages.cancelled(orderId, settlement);
  });
  return ended;
}
