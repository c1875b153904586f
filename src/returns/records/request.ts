import type pg from "pg";
import { AppError } from "../../errors";
import { decideReturnRequest, type ReturnRequestFacts } from "../../shared/order-model";
import { timelineKindSql } from "../../timeline/kinds";
import { exchangeCharge } from "../return-policy";
import type { RecordsContext } from "./context";
import { holdingStatuses, type NewReturn, type ReturnRow } from "./rows";

type Client = pg.PoolClient;
interface OrderedLine {
  sku: string;
  unit_price: number;
  shipped: number;
  returned: number;
}

/** The order, locked: delivered, every parcel, and within the return window. */
async function lockReturnableOrder(client: Client, request: NewReturn): Promise<void> {
  const { rows: orders } = await client.query<{
    status: string;
    delivered_at: Date | null;
    undelivered: number;
  }>(
    `SELECT o.status,
            (SELECT max(s.delivered_at) FROM shipments s WHERE s.order_id = o.id) AS delivered_at,
            (SELECT count(*)::int FROM shipments s WHERE s.order_id = o.id AND s.delivered_at IS NULL)
              AS undelivered
     FROM orders o WHERE o.id = $1::uuid FOR UPDATE OF o`,
    [request.orderId],
  );
  const order = orders[0];
  if (!order) throw new AppError("order_not_found", `Order ${request.orderId} does not exist`);
  // The model decides (decision 0170); the order's row lock above is the fence under it.
  const verdict = decideReturnRequest({
    status: order.status as ReturnRequestFacts["status"],
    deliveredAt: order.delivered_at,
    undelivered: order.undelivered,
    now: request.now,
    windowMs: request.windowMs,
  });
  if (verdict.allowed) return;
  if (verdict.code === "return_window_closed" && order.delivered_at) {
    const closesAt = order.delivered_at.getTime() + request.windowMs;
    throw new AppError(
      "return_window_closed",
      `The return window of order ${request.orderId} closed on ${new Date(closesAt).toISOString()} (delivered ${order.delivered_at.toISOString()})`,
      {
        details: {
          deliveredAt: order.delivered_at.toISOString(),
          closedAt: new Date(closesAt).toISOString(),
        },
      },
    );
  }
  throw new AppError(
    "order_not_returnable",
    `Order ${request.orderId} has not been delivered (status ${order.status}): only a delivered parcel can be returned`,
  );
}

/** Every line asked for is the order's, and no more than shipped less what is already returned. */
async function checkLines(client: Client, request: NewReturn): Promise<Map<string, OrderedLine>> {
  const { rows: lines } = await client.query<{
    sku: string;
    unit_price: number;
    shipped: number;
    returned: number;
  }>(
    // Units the fulfilment could not reserve (short_quantity) never shipped: not returnable.
    `SELECT l.sku, l.unit_price, l.quantity - l.short_quantity AS shipped,
            COALESCE((SELECT sum(rl.quantity)::int FROM return_lines rl JOIN returns r ON r.id = rl.return_id
                      WHERE r.order_id = l.order_id AND rl.sku = l.sku AND r.status IN ${holdingStatuses}), 0)
              AS returned
     FROM order_lines l WHERE l.order_id = $1::uuid`,
    [request.orderId],
  );
  const bySku = new Map(lines.map((line) => [line.sku, line]));
  const unknown = request.lines.filter((line) => !bySku.has(line.sku)).map((line) => line.sku);
  if (unknown.length > 0) {
    throw new AppError("return_line_invalid", `Order ${request.orderId} has no line ${unknown.join(", ")}`, {
      details: { skus: unknown },
    });
  }
  const over = request.lines.flatMap((line) => {
    const ordered = bySku.get(line.sku);
    const left = ordered ? ordered.shipped - ordered.returned : 0;
    return line.quantity > left ? [{ sku: line.sku, requested: line.quantity, returnable: left }] : [];
  });
  if (over.length > 0) {
    throw new AppError(
      "return_quantity_exceeded",
      over
        .map((o) => `${o.sku}: ${o.requested} asked, ${o.returnable} left to return (shipped minus returned)`)
        .join("; "),
      { details: { lines: over } },
    );
  }
  return bySku;
}

/**
 * The exchange's products: on sale, physical, in the order's currency and in stock; a dearer one
 * needs the card checkout saved. Returns the new items' prices by returned sku.
 */
async function checkExchange(
  client: Client,
  request: NewReturn,
  bySku: Map<string, OrderedLine>,
): Promise<Map<string, number>> {
  // An exchange asks for a product on sale, in the order's currency; one that costs more
  // is charged the difference off-session, on the card checkout saved (see docs/returns.md).
  const wanted = [...new Set(request.lines.flatMap((line) => (line.exchangeSku ? [line.exchangeSku] : [])))];
  const { rows: products } = wanted.length
    ? await client.query<{
        sku: string;
        unit_price: number;
        currency: string;
        archived_at: Date | null;
        digital: boolean;
        stock_on_hand: number;
      }>(
        `SELECT sku, unit_price, currency, archived_at, digital, stock_on_hand FROM products WHERE sku = ANY($1::text[])`,
        [wanted],
      )
    : { rows: [] };
  const { rows: payers } = await client.query<{
    currency: string;
    stripe_customer_id: string | null;
    payment_method_id: string | null;
  }>(`SELECT currency, stripe_customer_id, payment_method_id FROM orders WHERE id = $1::uuid`, [
    request.orderId,
  ]);
  const payer = payers[0];
  const currency = payer?.currency.trim().toLowerCase();
  const productOf = new Map(products.map((product) => [product.sku, product]));
  const exchangePrices = new Map<string, number>();
  for (const line of request.lines) {
    if (!line.exchangeSku) continue;
    const product = productOf.get(line.exchangeSku);
    if (
      !product ||
      product.archived_at ||
      product.digital ||
      product.currency.trim().toLowerCase() !== currency
    ) {
      throw new AppError(
        "exchange_sku_invalid",
        `${line.exchangeSku} cannot be sent in exchange for ${line.sku}: not a physical product on sale in the order's currency`,
        { details: { sku: line.sku, exchangeSku: line.exchangeSku } },
      );
    }
    const asked = request.lines
      .filter((other) => other.exchangeSku === line.exchangeSku)
      .reduce((sum, other) => sum + other.quantity, 0);
    if (product.stock_on_hand < asked) {
      throw new AppError(
        "insufficient_stock",
        `Only ${product.stock_on_hand} of ${line.exchangeSku} in stock`,
        {
          details: { sku: line.exchangeSku, stockOnHand: product.stock_on_hand },
        },
      );
    }
    exchangePrices.set(line.sku, product.unit_price);
  }
  const owed = exchangeCharge(
    request.lines.map((line) => ({
      unitPrice: bySku.get(line.sku)?.unit_price ?? 0,
      quantity: line.quantity,
      exchangeSku: line.exchangeSku ?? null,
      exchangeUnitPrice: exchangePrices.get(line.sku) ?? null,
    })),
  );
  if (owed > 0 && !(payer?.stripe_customer_id && payer.payment_method_id)) {
    // Paid before checkout saved cards (or with a method that cannot be saved): nothing
    // to charge the difference to without the customer at a payment page.
    throw new AppError(
      "exchange_needs_saved_card",
      `The exchange costs ${owed} more than the returned lines, and order ${request.orderId} has no saved card to charge it to: return the lines for a refund and order the new items`,
      { details: { difference: owed } },
    );
  }
  return exchangePrices;
}

/** The return, its lines and its timeline entry; returns its id. */
async function insertReturn(client: Client, request: NewReturn, exchangePrices: Map<string, number>) {
  const { rows: created } = await client.query<{ id: string }>(
    `INSERT INTO returns (id, order_id, status, reason, note, requested_by, updated_at)
     VALUES (gen_random_uuid(), $1::uuid, $2::return_status, $3, $4, $5, now()) RETURNING id`,
    [
      request.orderId,
      request.approved ? "approved" : "requested",
      request.reason,
      request.note ?? null,
      request.requestedBy,
    ],
  );
  const returnId = created[0]?.id as string;
  await client.query(
    `INSERT INTO return_lines (return_id, sku, quantity, unit_price, exchange_sku, exchange_unit_price)
     SELECT $1::uuid, l.sku, l.quantity, o.unit_price, l.exchange_sku, l.exchange_unit_price
     FROM unnest($2::text[], $3::int[], $5::text[], $6::int[]) AS l(sku, quantity, exchange_sku, exchange_unit_price)
     JOIN order_lines o ON o.order_id = $4::uuid AND o.sku = l.sku`,
    [
      returnId,
      request.lines.map((l) => l.sku),
      request.lines.map((l) => l.quantity),
      request.orderId,
      request.lines.map((l) => l.exchangeSku ?? null),
      request.lines.map((l) => exchangePrices.get(l.sku) ?? null),
    ],
  );
  await client.query(
    `INSERT INTO order_timeline (order_id, kind, detail) VALUES ($1::uuid, ${timelineKindSql("return-requested")}, $2::jsonb)`,
    [
      request.orderId,
      JSON.stringify({
        returnId,
        by: request.requestedBy,
        reason: request.reason,
        lines: request.lines,
        approved: request.approved,
      }),
    ],
  );
  return returnId;
}

/**
 * Checks the request against the order under the order's row lock (two requests at once take
 * turns, so together they cannot return more than was shipped) and records it, with its
 * timeline entry, in one transaction. Refuses with the reason, changing nothing.
 */
export function createReturnRequests(ctx: RecordsContext) {
  const { sql, get } = ctx;
  return {
    async create(request: NewReturn): Promise<ReturnRow> {
      const client = await sql.connect();
      try {
        await client.query("BEGIN");
        await lockReturnableOrder(client, request);
        const bySku = await checkLines(client, request);
        const exchangePrices = await checkExchange(client, request, bySku);
        const returnId = await insertReturn(client, request, exchangePrices);
        await client.query("COMMIT");
        return (await get(returnId)) as ReturnRow;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
  };
}
