import { assertWebUrl, html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

export interface ShippedInput {
  order: OrderSummary;
  carrier: string;
  trackingNumber: string;
  trackingUrl: string;
}

export function shipped(input: ShippedInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const trackingUrl = assertWebUrl(input.trackingUrl);
  const subject = `Your order ${reference} is on its way`;
  const text = [
    `Good news: your order ${reference} has shipped with ${input.carrier}.`,
    "",
    `Tracking number: ${input.trackingNumber}`,
    `Track your parcel: ${trackingUrl}`,
    "",
    orderLinesText(input.order),
    "",
    "Thank you for shopping with us.",
  ].join("\n");
  const body = html`<p>
      Good news: your order <strong>${reference}</strong> has shipped with ${input.carrier}.
    </p>
    <p>
      Tracking number: <strong>${input.trackingNumber}</strong><br />
      <a href="${trackingUrl}">Track your parcel</a>
    </p>
    ${orderLinesHtml(input.order)}
    <p>Thank you for shopping with us.</p>`;
  return { subject, text, html: htmlDocument(subject, body) };
}
