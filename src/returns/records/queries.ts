import { returnColumns, type ReturnRow } from "./rows";
import type { RecordsContext } from "./context";

/** Reads of returns: by id, order, tracking number; the open ones; the order's card and address. */
export function createReturnQueries(ctx: RecordsContext) {
  const { sql, get } = ctx;
  return {
    get,

    async listForOrder(orderId: string): Promise<ReturnRow[]> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.order_id = $1::uuid ORDER BY r.created_at DESC, r.id`,
        [orderId],
      );
      return rows;
    },

    /** Returns still to act on (requested, approved, received), oldest first: the console's list. */
    async listOpen(limit: number): Promise<ReturnRow[]> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.status IN ('requested', 'approved', 'received')
         ORDER BY r.created_at, r.id LIMIT $1`,
        [limit],
      );
      return rows;
    },

    async orderExists(orderId: string): Promise<boolean> {
      const { rows } = await sql.query(`SELECT 1 FROM orders WHERE id = $1::uuid`, [orderId]);
      return rows.length > 0;
    },

    async byTrackingNumber(trackingNumber: string): Promise<ReturnRow | null> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.label_tracking_number = $1`,
        [trackingNumber],
      );
      return rows[0] ?? null;
    },

    /** The return whose exchange parcel has this tracking number. */
    async byExchangeTrackingNumber(trackingNumber: string): Promise<ReturnRow | null> {
      const { rows } = await sql.query<ReturnRow>(
        `SELECT ${returnColumns} FROM returns r WHERE r.exchange_tracking_number = $1`,
        [trackingNumber],
      );
      return rows[0] ?? null;
    },

    /** The card checkout saved on the return's order, for the exchange's charge. */
    async savedCard(returnId: string) {
      const { rows } = await sql.query<{
        email: string;
        currency: string;
        stripe_customer_id: string | null;
        payment_method_id: string | null;
      }>(
        `SELECT o.email, o.currency, o.stripe_customer_id, o.payment_method_id
         FROM returns r JOIN orders o ON o.id = r.order_id WHERE r.id = $1::uuid`,
        [returnId],
      );
      return rows[0] ?? null;
    },

    /** What the returned lines weigh, one unit each, for the return parcel (null: the default). */
    async destination(returnId: string) {
      const { rows } = await sql.query<{
        shipping_address: unknown;
        weights: Record<string, number | null> | null;
      }>(
        `SELECT o.shipping_address,
                (SELECT json_object_agg(p.sku, p.weight_oz) FROM products p
                 WHERE p.sku IN (SELECT l.sku FROM return_lines l WHERE l.return_id = r.id
                                 UNION SELECT l.exchange_sku FROM return_lines l WHERE l.return_id = r.id)) AS weights
         FROM returns r JOIN orders o ON o.id = r.order_id WHERE r.id = $1::uuid`,
        [returnId],
      );
      return rows[0] ?? null;
    },
  };
}
