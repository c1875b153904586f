import { html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

export interface RefundedInput {
  order: OrderSummary;
  /** Minor units refunded by this refund. */
  amount: number;
  /** True when the whole captured amount has now been refunded. */
  full: boolean;
}

/** Sent once per refund request (key `refund-<refund id>`), whether full or partial. */
export function refunded(input: RefundedInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const amount = formatMoney(input.amount, input.order.currency);
  const subject = input.full
    ? `Your order ${reference} has been refunded`
    : `A refund of ${amount} for your order ${reference}`;
  const money = `We have refunded ${amount} to your card; depending on your bank it can take 5–10 days to appear.`;
  const text = [subject, money, "", orderLinesText(input.order)].join("\n");
  const body = html`<p>${subject}.</p>
    <p>${money}</p>
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
