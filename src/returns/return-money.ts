import type { Database } from "../db/client";
import { nextUnitsWorth, storedBreakdown } from "../payments/money-breakdown";

/** What the units of a returned line are worth, in minor units. */
export type LineWorth = (line: { sku: string; quantity: number }) => number;

/**
 * What a return's lines are worth from Stripe's recorded breakdown (src/payments/money-breakdown.ts):
 * each line's price plus its tax share less its discount share, pro-rated per unit by the
 * cumulative-floor rule, counting the units of that line this order's earlier returns already
 * settled (refunded, or withheld for a dispute), so every unit of a line returned over any number
 * of returns refunds the line's `amount_total` exactly. Shipping is never part of a return's refund
 * (docs/checkout.md). Undefined for an order without a breakdown: its lines refund at unit price ×
 * quantity, as before.
 */
export async function returnLineWorth(
  db: Database,
  orderId: string,
  returnId: string,
): Promise<LineWorth | undefined> {
  const rows = await db.$queryRaw<{ money_breakdown: unknown }[]>`
    SELECT money_breakdown FROM orders WHERE id = ${orderId}::uuid`;
  const money = storedBreakdown(rows[0]?.money_breakdown);
  if (!money) return undefined;
  const settled = await db.$queryRaw<{ sku: string; units: number }[]>`
    SELECT l.sku, sum(l.quantity)::int AS units
    FROM return_lines l JOIN returns r ON r.id = l.return_id
    WHERE r.order_id = ${orderId}::uuid AND r.id <> ${returnId}::uuid AND r.refunded_at IS NOT NULL
      AND l.exchange_sku IS NULL
    GROUP BY l.sku`;
  const before = new Map(settled.map((row) => [row.sku, row.units]));
  return (line) => {
    const recorded = money.lines.find((entry) => entry.sku === line.sku);
    if (!recorded) return 0;
    return nextUnitsWorth(recorded, before.get(line.sku) ?? 0, line.quantity);
  };
}
