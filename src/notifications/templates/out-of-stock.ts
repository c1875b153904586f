import { html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

export interface OutOfStockInput {
  order: OrderSummary;
  /** Names of the items that ran out; the whole order is cancelled either way. */
  unavailable: readonly string[];
  /** Whether the money was already taken (automatic capture) and has been refunded. */
  refunded?: boolean;
}

function moneySentence(input: OutOfStockInput, amount: string): string {
  return input.refunded
    ? `We have refunded ${amount} to your card; depending on your bank it can take 5–10 days to appear.`
    : `The hold of ${amount} on your card has been released and you have not been charged.`;
}

export function outOfStock(input: OutOfStockInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const amount = formatMoney(input.order.total, input.order.currency);
  const subject = `Sorry, we could not fulfil order ${reference}`;
  const missing = input.unavailable.length > 0 ? input.unavailable.join(", ") : "some items";
  const text = [
    `We are sorry: ${missing} sold out before we could reserve it for your order ${reference}, so we have cancelled the order.`,
    moneySentence(input, amount),
    "",
    orderLinesText(input.order),
  ].join("\n");
  const body = html`<p>
      We are sorry: ${missing} sold out before we could reserve it for your order
      <strong>${reference}</strong>, so we have cancelled the order.
    </p>
    <p>${moneySentence(input, amount)}</p>
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
