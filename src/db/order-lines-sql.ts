/**
 * SQL for an order's lines as one JSON array (sku order), to read an order and its lines in one
 * statement where Prisma's `include` takes two. `orderAlias` names the `orders` row in the query.
 */
export const orderLinesJsonSql = (orderAlias: string): string =>
  `COALESCE((SELECT json_agg(json_build_object('sku', l.sku, 'name', l.name,
                     'unitPrice', l.unit_price, 'quantity', l.quantity) ORDER BY l.sku)
            FROM order_lines l WHERE l.order_id = ${orderAlias}.id), '[]')`;

/** One line of `orderLinesJsonSql`'s array. */
export interface OrderLineJson {
  sku: string;
  name: string;
  unitPrice: number;
  quantity: number;
}
