import { timelineKindSql, type TimelineDetail, type TimelineKind } from "../../timeline/kinds";
import { type ReturnActor, type ReturnCondition } from "../return-policy";
import { type ReturnRow, type ReturnStatus } from "./rows";
import type { RecordsContext } from "./context";

/** A return moved between statuses, refunded, restocked or written off: each once. */
export function createSettlementRecords(ctx: RecordsContext) {
  const { sql, get } = ctx;
  return {
    /**
     * Moves a return from one of `from` to `to` in one conditional UPDATE; null when it was not in
     * one of them (someone else moved it first, or it never was). With `entry`, the order's
     * timeline entry of the move is written by the same statement, only when it moved: an entry
     * that feeds a lifecycle event (decision 0196) then commits with the move or not at all.
     */
    async transition(
      returnId: string,
      from: readonly ReturnStatus[],
      to: ReturnStatus,
      fields: {
        condition?: ReturnCondition;
        by?: ReturnActor;
        note?: string | undefined;
        entry?: { kind: TimelineKind; detail: TimelineDetail };
      } = {},
    ): Promise<ReturnRow | null> {
      const { rows } = await sql.query<{ id: string }>(
        `WITH moved AS (
           UPDATE returns SET status = $3::return_status, updated_at = now(),
                  condition = COALESCE($4, condition),
                  received_by = CASE WHEN $3 = 'received' THEN $5 ELSE received_by END,
                  received_at = CASE WHEN $3 = 'received' THEN now() ELSE received_at END,
                  decided_by = CASE WHEN $3 <> 'received' THEN COALESCE($5, decided_by) ELSE decided_by END,
                  decision_note = COALESCE($6, decision_note),
                  closed_at = CASE WHEN $3 IN ('closed', 'rejected', 'cancelled') THEN now() ELSE closed_at END
           WHERE id = $1::uuid AND status = ANY($2::return_status[]) RETURNING id, order_id
         ),
         entry AS (
           INSERT INTO order_timeline (order_id, kind, detail)
           SELECT order_id, $7::text, $8::jsonb FROM moved WHERE $7::text IS NOT NULL
         )
         SELECT id FROM moved`,
        [
          returnId,
          from,
          to,
          fields.condition ?? null,
          fields.by ?? null,
          fields.note ?? null,
          fields.entry?.kind ?? null,
          fields.entry ? JSON.stringify(fields.entry.detail) : null,
        ],
      );
      return rows[0] ? get(returnId) : null;
    },

    async recordRefund(returnId: string, amount: number, fee: number): Promise<void> {
      await sql.query(
        `UPDATE returns SET refund_amount = $2, restocking_fee = $3, refunded_at = COALESCE(refunded_at, now()),
                updated_at = now() WHERE id = $1::uuid`,
        [returnId, amount, fee],
      );
    },

    /**
     * Puts the returned units back on the shelf, once per return: the return is marked restocked,
     * each product's stock rises by its line and a `returned` movement (with the order) is written,
     * all in this one statement, so a repeat (a retried step, the carrier's event twice) finds it
     * restocked and moves nothing. Returns the movements made (none on a repeat).
     */
    async restock(returnId: string, runId: string | null) {
      const { rows } = await sql.query<{ sku: string; delta: number; stock_after: number }>(
        `WITH target AS (
           UPDATE returns SET restocked_at = now(), updated_at = now()
           WHERE id = $1::uuid AND status = 'received' AND restocked_at IS NULL AND written_off_at IS NULL
           RETURNING id, order_id
         ),
         lines AS (
           SELECT l.sku, l.quantity, t.order_id FROM return_lines l JOIN target t ON t.id = l.return_id
         ),
         changed AS (
           UPDATE products p SET stock_on_hand = p.stock_on_hand + l.quantity, updated_at = now()
           FROM lines l WHERE p.sku = l.sku
           RETURNING p.sku, p.stock_on_hand
         ),
         moved AS (
           INSERT INTO stock_movements (sku, delta, reason, actor, order_id, note, stock_after)
           SELECT c.sku, l.quantity, 'returned', 'process-return', l.order_id, 'return ' || $1, c.stock_on_hand
           FROM changed c JOIN lines l USING (sku)
           RETURNING sku, delta, stock_after
         ),
         noted AS (
           INSERT INTO order_timeline (order_id, kind, detail, run_id)
           SELECT t.order_id, ${timelineKindSql("return-restocked")},
                  jsonb_build_object('returnId', t.id, 'lines', (SELECT json_agg(json_build_object('sku', sku, 'quantity', quantity)) FROM lines)),
                  $2
           FROM target t
           ON CONFLICT DO NOTHING
         )
         SELECT sku, delta, stock_after FROM moved ORDER BY sku`,
        [returnId, runId],
      );
      return rows.map((row) => ({ sku: row.sku, delta: row.delta, stockAfter: row.stock_after }));
    },

    /** Damaged goods: no stock moves (they never were on hand since they shipped); marked once. */
    async writeOff(returnId: string): Promise<boolean> {
      const { rowCount } = await sql.query(
        `UPDATE returns SET written_off_at = now(), updated_at = now()
         WHERE id = $1::uuid AND status = 'received' AND restocked_at IS NULL AND written_off_at IS NULL`,
        [returnId],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}
