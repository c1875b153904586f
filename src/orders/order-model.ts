import type { OrderStatus } from "./order-repository";

/**
 * The order's state model (decision 0170): what an order may do next, declared once. The admin
 * API's use cases, the console, the customer pages and the workflow's guarded writes ask it; the
 * SQL guards that cannot call it (one statement under the order's row lock) are checked against
 * it by test/orders/order-model.test.ts, and docs/order-model.md is rendered from it.
 *
 * A typed table of our own, not XState: the state here is a row (status plus a few facts: a
 * cancel asked, a hold, labels bought and scanned, a run failed) that many processes change under
 * row locks, never one in-memory actor; what we need is "is this action allowed on these facts,
 * and if not, why", asked from SQL-bound code and rendered as a table. See the decision record.
 */

export const orderStatuses = [
  "pending",
  "payment_processing",
  "authorized",
  "paid",
  "payment_failed",
  "expired",
  "fulfilling",
  "shipped",
  "delivered",
  "completed",
  "cancelled",
  "cancelled_out_of_stock",
] as const satisfies readonly OrderStatus[];

/** Paid (or authorized) and not yet ended: the fulfilment run may still move it forward. */
export const inFulfilmentStatuses = [
  "authorized",
  "paid",
  "fulfilling",
] as const satisfies readonly OrderStatus[];
/** A label was bought and recorded: the parcel is (or was) with the carrier. */
export const bookedStatuses = ["shipped", "delivered", "completed"] as const satisfies readonly OrderStatus[];
/** Ended without shipping: nothing more happens to it but money matters (refunds, disputes). */
export const endedUnshippedStatuses = [
  "payment_failed",
  "expired",
  "cancelled",
  "cancelled_out_of_stock",
] as const satisfies readonly OrderStatus[];

/** Tracker statuses of a label the carrier has not scanned yet (EasyPost's "label created"). */
export const unscannedTrackerStatuses: readonly (string | null)[] = [null, "unknown", "pre_transit"];

const includes = <T extends string>(list: readonly T[], value: string): boolean =>
  (list as readonly string[]).includes(value);

/**
 * After an outside effect (a label bought) whose record was refused: does the order still want
 * it? Yes when it is recorded as a current parcel (another run landed it), or when the order is
 * still in fulfilment and no cancel was asked (a re-drive's run finds it by its carrier reference).
 * No once a cancel is asked or the order ended: then the label is handed back.
 */
export function labelWanted(facts: { status: string; cancelRequested: boolean; recorded: boolean }): boolean {
  if (facts.recorded) return true;
  if (facts.cancelRequested) return false;
  return includes(inFulfilmentStatuses, facts.status);
}

/** A re-ship's new label may be recorded only while the order is shipped and no cancel was asked. */
export function reshipMayLand(facts: { status: string; cancelRequested: boolean }): boolean {
  return facts.status === "shipped" && !facts.cancelRequested;
}
