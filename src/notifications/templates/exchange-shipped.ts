import { assertWebUrl, html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

export interface ExchangeShippedInput {
  order: OrderSummary;
  /** The new items on their way, by name. */
  lines: readonly { name: string; quantity: number }[];
  trackingNumber: string;
  trackingUrl: string;
}

/** Sent once per exchange (key `exchange-shipped-<returnId>`): the new item's tracking. */
export function exchangeShipped(input: ExchangeShippedInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const subject = `Your exchange for order ${reference} is on its way`;
  const items = input.lines.map((line) => `${line.quantity} × ${line.name}`).join(", ") || "your exchange";
  const text = [
    `We have sent ${items} in exchange.`,
    ...(input.trackingNumber ? [`Tracking ${input.trackingNumber}: ${input.trackingUrl}`] : []),
    "",
    orderLinesText(input.order),
  ].join("\n");
  const body = html`<p>We have sent ${items} in exchange.</p>
    ${
      input.trackingNumber
        ? html`<p>Tracking <a href="${assertWebUrl(input.trackingUrl)}">${input.trackingNumber}</a></p>`
        : ""
    }
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
