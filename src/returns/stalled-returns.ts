import type { Alerter } from "../alerts";
import { sqlPool, type Database } from "../db/client";
import {
  exchangePaidEvent,
  returnApprovedEvent,
  returnCancelledEvent,
  returnReceivedEvent,
  type OutgoingEvent,
} from "../events/contracts";
import type { Timeline } from "../timeline/timeline";

/**
 * How long a return may wait for its run, or for its run to hear a decision, before the sweep
 * steps in: far beyond a healthy publish and run start (milliseconds), short beside the day a
 * run's wait lasts before it reads the return again.
 */
export const returnStalledAfterMs = 5 * 60_000;

export interface StalledReturn {
  returnId: string;
  orderId: string;
  status: string;
}

/** What the sweep sends again for one return: the event its state expects, under the event's own id. */
export interface ReAnnouncement {
  returnId: string;
  orderId: string;
  event: OutgoingEvent;
}

/**
 * Every return row that expects a run, found when its event was lost (decision 0175). The
 * use cases (src/returns/returns.ts) write the row, then publish: a crash between the two leaves a
 * row no run knows of. Two kinds:
 *
 * - **Never started**: open, with no `run_started_at` (process-return sets it at its first read)
 *   minutes after it was recorded. Its shop/return.requested is sent again (the same id; the
 *   function's idempotency on the return id keeps it to one run), ops are told once per return.
 * - **A decision not heard**: approved with no label, received and not refunded, rejected or
 *   closed with the label not handed back, or an exchange paid on its Checkout page and not
 *   shipped, minutes after the change. The decision's event is sent again under its own id: an
 *   event the engine has already taken is dropped (the common case), a lost one wakes the run's
 *   wait. Nothing is said to ops for these (nothing tells a lost event from a slow run).
 */
export function createStalledReturns(db: Database) {
  const sql = sqlPool(db);
  return {
    /** The run has read the return: nothing to rescue from now on. One statement, idempotent. */
    async markRunStarted(returnId: string): Promise<void> {
      await sql.query(
        `UPDATE returns SET run_started_at = now() WHERE id = $1::uuid AND run_started_at IS NULL`,
        [returnId],
      );
    },

    async findUnstarted(olderThan: Date, limit: number): Promise<StalledReturn[]> {
      const { rows } = await sql.query<{ id: string; order_id: string; status: string }>(
        `SELECT id, order_id, status FROM returns
          WHERE run_started_at IS NULL AND created_at < $1
            AND status IN ('requested', 'approved', 'received')
          ORDER BY created_at LIMIT $2`,
        [olderThan, limit],
      );
      return rows.map((row) => ({ returnId: row.id, orderId: row.order_id, status: row.status }));
    },

    async findUnheard(olderThan: Date, limit: number): Promise<ReAnnouncement[]> {
      const { rows } = await sql.query<{
        id: string;
        order_id: string;
        status: string;
        condition: "resellable" | "damaged" | null;
        decision_note: string | null;
        exchange_checkout_session_id: string | null;
        exchange_paid: boolean;
      }>(
        `SELECT id, order_id, status, condition, decision_note, exchange_checkout_session_id,
                (exchange_charge_status = 'charged' AND exchange_checkout_session_id IS NOT NULL
                 AND exchange_tracking_number IS NULL AND exchange_charged_at < $1) AS exchange_paid
           FROM returns
          WHERE run_started_at IS NOT NULL AND updated_at < $1 AND (
                (status = 'approved' AND label_tracking_number IS NULL)
             OR (status = 'received' AND refunded_at IS NULL AND written_off_at IS NULL AND restocked_at IS NULL
                 AND exchange_charge_status IS DISTINCT FROM 'failed'
                 AND exchange_charge_status IS DISTINCT FROM 'awaiting_payment'
                 AND exchange_charge_status IS DISTINCT FROM 'unpaid')
             OR (status IN ('rejected', 'closed') AND label_tracking_number IS NOT NULL
                 AND received_at IS NULL AND label_refund_status IS NULL AND closed_at < $1
                 AND label_tracker_status IS DISTINCT FROM 'delivered')
             OR (status IN ('approved', 'received') AND exchange_charge_status = 'charged'
                 AND exchange_checkout_session_id IS NOT NULL AND exchange_tracking_number IS NULL))
          ORDER BY updated_at LIMIT $2`,
        [olderThan, limit],
      );
      return rows.map((row) => {
        const ids = { returnId: row.id, orderId: row.order_id };
        const event: OutgoingEvent =
          row.exchange_paid && row.exchange_checkout_session_id
            ? exchangePaidEvent({ ...ids, checkoutSessionId: row.exchange_checkout_session_id })
            : row.status === "approved"
              ? returnApprovedEvent(ids)
              : row.status === "received"
                ? returnReceivedEvent({ ...ids, condition: row.condition ?? "resellable" })
                : returnCancelledEvent({ ...ids, reason: row.decision_note ?? row.status });
        return { ...ids, event };
      });
    },
  };
}

export type StalledReturns = ReturnType<typeof createStalledReturns>;

/** The rescue, told: on the order's timeline and to ops, once per return (the alert's key). */
export async function tellReturnRescued(
  deps: { timeline: Pick<Timeline, "record">; alerts: Pick<Alerter, "notify"> },
  stalled: StalledReturn,
  runId: string,
): Promise<void> {
  await deps.timeline.record(
    stalled.orderId,
    "return-run-recovered",
    { returnId: stalled.returnId, status: stalled.status },
    runId,
  );
  await deps.alerts.notify({
    key: `return-rescued-${stalled.returnId}`,
    title: "Return recovered: its run had not started",
    fields: {
      orderId: stalled.orderId,
      returnId: stalled.returnId,
      status: stalled.status,
      action:
        "Nothing to do: the return's run was started again (its label follows). Check the return if the customer asked about it meanwhile",
    },
  });
}
