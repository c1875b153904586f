import { formatMoney } from "./money";
import { assertWebUrl, html, type SafeHtml } from "./html";
import type { OrderSummary } from "./types";

/** Customers see a short reference rather than a UUID; support can still search by prefix. */
export function orderReference(orderId: string): string {
  return orderId.replace(/-/g, "").slice(0, 8).toUpperCase();
}

export function orderLinesText(order: OrderSummary): string {
  const lines = order.lines.map(
    (line) =>
      `  ${line.quantity} × ${line.name}  ${formatMoney(line.unitPrice * line.quantity, order.currency)}`,
  );
  return [...lines, `  Total: ${formatMoney(order.total, order.currency)}`, ...orderLinkText(order)].join(
    "\n",
  );
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
  return html`<table role="presentation" cellpadding="4" style="border-collapse:collapse">
      ${rows}
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
