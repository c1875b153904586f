import { html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

export interface AddressCorrectionInput {
  order: OrderSummary;
  /** The carrier's own words on why it cannot deliver there. */
  carrierMessage: string;
  /** The signed page where the customer corrects the address. */
  correctionUrl: string;
}

export function addressCorrection(input: AddressCorrectionInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const subject = `Please check the delivery address of order ${reference}`;
  const text = [
    `The carrier cannot deliver your order ${reference} to the address you gave us, so we are holding it.`,
    `The carrier says: ${input.carrierMessage}`,
    "",
    `Correct the address here and we will ship it: ${input.correctionUrl}`,
    "",
    orderLinesText(input.order),
  ].join("\n");
  const body = html`<p>
      The carrier cannot deliver your order <strong>${reference}</strong> to the address you gave us, so we
      are holding it.
    </p>
    <p>The carrier says: ${input.carrierMessage}</p>
    <p><a href="${input.correctionUrl}">Correct the address</a> and we will ship it.</p>
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
