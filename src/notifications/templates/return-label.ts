import { assertWebUrl, html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

export interface ReturnLabelInput {
  order: OrderSummary;
  /** The lines going back, by name. */
  lines: readonly { name: string; quantity: number }[];
  labelUrl: string;
  trackingNumber: string;
  trackingUrl: string;
  /** What the refund will be once the parcel is back (the returned lines, less any restocking fee). */
  refundAmount: number;
}

/** Sent once per return (key `return-label-<returnId>`): the label to print and what happens next. */
export function returnLabel(input: ReturnLabelInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const subject = `Your return label for order ${reference}`;
  const refund = formatMoney(input.refundAmount, input.order.currency);
  const items = input.lines.map((line) => `${line.quantity} × ${line.name}`).join(", ");
  // Rendered again for an order whose return left no label on record (the console's view of a
  // template), the label and tracking parts are left out rather than linked to nothing.
  const text = [
    `Your return of ${items || "your items"} is accepted.`,
    ...(input.labelUrl
      ? ["Print the label, stick it on the parcel and hand it to the carrier:", input.labelUrl]
      : []),
    "",
    ...(input.trackingNumber ? [`Tracking ${input.trackingNumber}: ${input.trackingUrl}`] : []),
    `Once it is back with us we refund ${refund} to your card.`,
    "",
    orderLinesText(input.order),
  ].join("\n");
  const body = html`<p>Your return of ${items || "your items"} is accepted.</p>
    ${
      input.labelUrl
        ? html`<p>
            <a href="${assertWebUrl(input.labelUrl)}">Print the return label</a>, stick it on the parcel and
            hand it to the carrier.
          </p>`
        : ""
    }
    ${
      input.trackingNumber
        ? html`<p>Tracking <a href="${assertWebUrl(input.trackingUrl)}">${input.trackingNumber}</a>.</p>`
        : ""
    }
    <p>Once it is back with us we refund ${refund} to your card.</p>
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
