import { formatMoney } from "./money";
import { assertWebUrl, html, type SafeHtml } from "./html";
import type { LineMoneySummary, OrderSummary } from "./types";

/** Customers see a short reference rather than a UUID; support can still search by prefix. */
export function orderReference(orderId: string): string {
  return orderId.replace(/-/g, "").slice(0, 8).toUpperCase();
}

export function orderLinesText(order: OrderSummary): string {
  const lines = order.lines.map(
    (line) =>
      `  ${line.quantity} × ${line.name}  ${formatMoney(line.unitPrice * line.quantity, order.currency)}`,
  );
  const money = moneyRows(order).map(([label, amount]) => `  ${label}: ${amount}`);
  return [
    ...lines,
    ...money,
    `  Total: ${formatMoney(order.total, order.currency)}`,
    ...orderLinkText(order),
  ].join("\n");
}

/**
 * Subtotal, shipping, discount and tax as Stripe charged them, for an order that recorded its
 * breakdown and something beyond its lines (none otherwise: the lines make the total). A zero
 * discount or tax is not shown.
 */
export function moneyRows(order: OrderSummary): [string, string][] {
  const money = order.money;
  // Nothing but the lines (no shipping option, discount or tax): shown as it always was.
  if (!money || (money.shipping === 0 && !money.shippingName && money.discount === 0 && money.tax === 0))
    return [];
  const rows: [string, string][] = [["Subtotal", formatMoney(money.subtotal, order.currency)]];
  if (money.shipping > 0 || money.shippingName)
    rows.push([
      money.shippingName ? `Shipping (${money.shippingName})` : "Shipping",
      formatMoney(money.shipping, order.currency),
    ]);
  if (money.discount > 0) rows.push(["Discount", `−${formatMoney(money.discount, order.currency)}`]);
  // Tax inside tax-inclusive prices is part of the subtotal already: said so, not added again.
  if (money.tax > 0)
    rows.push([money.taxIncluded ? "Tax (included)" : "Tax", formatMoney(money.tax, order.currency)]);
  return rows;
}

/**
 * One line's discount share and tax as Stripe recorded them, e.g. "discount −$5.00 · tax $0.80"
 * ("includes tax" for a tax-inclusive price); null for a line with neither.
 */
export function lineMoneyText(line: LineMoneySummary | undefined, currency: string): string | null {
  if (!line) return null;
  const parts = [
    line.discount > 0 ? `discount −${formatMoney(line.discount, currency)}` : null,
    line.tax > 0 ? `${line.taxIncluded ? "includes tax" : "tax"} ${formatMoney(line.tax, currency)}` : null,
  ].filter((part): part is string => part !== null);
  return parts.length > 0 ? parts.join(" · ") : null;
}

/** "View your order" with the order page's signed link, when the summary carries one. */
export function orderLinkText(order: OrderSummary): string[] {
  return order.orderUrl ? ["", `View your order: ${assertWebUrl(order.orderUrl)}`] : [];
}

export function orderLinkHtml(order: OrderSummary): SafeHtml {
  return order.orderUrl ? html`<p><a href="${assertWebUrl(order.orderUrl)}">View your order</a></p>` : html``;
}

export function orderLinesHtml(order: OrderSummary): SafeHtml {
  const rows = order.lines.map(
    (line) =>
      html`<tr>
        <td>${line.quantity} × ${line.name}</td>
        <td style="text-align:right">${formatMoney(line.unitPrice * line.quantity, order.currency)}</td>
      </tr>`,
  );
  const money = moneyRows(order).map(
    ([label, amount]) =>
      html`<tr>
        <td>${label}</td>
        <td style="text-align:right">${amount}</td>
      </tr>`,
  );
  return html`<table role="presentation" cellpadding="4" style="border-collapse:collapse">
      ${rows} ${money}
      <tr>
        <td><strong>Total</strong></td>
        <td style="text-align:right"><strong>${formatMoney(order.total, order.currency)}</strong></td>
      </tr>
    </table>
    ${orderLinkHtml(order)}`;
}

export function htmlDocument(title: string, body: SafeHtml): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width" />
        <title>${title}</title>
      </head>
      <body style="font-family:Arial,Helvetica,sans-serif;line-height:1.5;color:#222">
        ${body}
      </body>
    </html> `.value;
}
