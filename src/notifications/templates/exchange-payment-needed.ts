import { assertWebUrl, html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

export interface ExchangePaymentNeededInput {
  order: OrderSummary;
  /** The new items asked for, by name. */
  lines: readonly { name: string; quantity: number }[];
  /** The difference to pay, in minor units. */
  amount: number;
  /** Stripe's hosted Checkout page for the difference. */
  payUrl: string;
  /** Until when the page takes payment. */
  payBy: string;
}

/**
 * Sent once per exchange (key `exchange-checkout-<returnId>`) when the bank refused the
 * difference off-session because it wants the customer present: the link is Stripe's Checkout
 * page, where the bank can confirm the payment with them. The new items are held meanwhile.
 */
export function exchangePaymentNeeded(input: ExchangePaymentNeededInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const subject = `Your exchange for order ${reference}: please confirm the payment of the difference`;
  const amount = formatMoney(input.amount, input.order.currency);
  const items = input.lines.map((line) => `${line.quantity} × ${line.name}`).join(", ") || "your exchange";
  const why = `Your bank asked to confirm the difference of ${amount} for ${items} with you.`;
  const next = `Pay it on this page by ${input.payBy}: we have put the new items aside, and send them as soon as it is paid. If it is not paid by then, the exchange is closed and nothing is charged.`;
  const text = [
    why,
    next,
    "",
    `Pay the difference: ${input.payUrl}`,
    ...(input.order.orderUrl ? ["", `Your order: ${input.order.orderUrl}`] : []),
    "",
    orderLinesText(input.order),
  ].join("\n");
  const body = html`<p>${why}</p>
    <p>${next}</p>
    <p><a href="${assertWebUrl(input.payUrl)}">Pay the difference</a></p>
    ${input.order.orderUrl ? html`<p><a href="${assertWebUrl(input.order.orderUrl)}">Your order</a></p>` : ""}
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
