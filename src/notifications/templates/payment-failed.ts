import { html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

export interface PaymentFailedInput {
  order: OrderSummary;
  /** A customer-safe explanation (a card decline message, say); never an internal error. */
  reason?: string;
}

export function paymentFailed(input: PaymentFailedInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const amount = formatMoney(input.order.total, input.order.currency);
  const subject = `We could not take payment for order ${reference}`;
  const text = [
    `We could not collect the payment of ${amount} for your order ${reference}, so we have not shipped it.`,
    ...(input.reason ? [`Reason given by the card issuer: ${input.reason}`] : []),
    "The hold on your card has been released and you have not been charged.",
    "",
    orderLinesText(input.order),
    "",
    "You are welcome to place the order again with another payment method.",
  ].join("\n");
  const body = html`<p>
      We could not collect the payment of <strong>${amount}</strong> for your order
      <strong>${reference}</strong>, so we have not shipped it.
    </p>
    ${input.reason ? html`<p>Reason given by the card issuer: ${input.reason}</p>` : ""}
    <p>The hold on your card has been released and you have not been charged.</p>
    ${orderLinesHtml(input.order)}
    <p>You are welcome to place the order again with another payment method.</p>`;
  return { subject, text, html: htmlDocument(subject, body) };
}
