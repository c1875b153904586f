import { assertWebUrl, html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

export interface ExchangeChargeFailedInput {
  order: OrderSummary;
  /** The new items asked for, by name. */
  lines: readonly { name: string; quantity: number }[];
  /** The difference that could not be charged, in minor units. */
  amount: number;
  /** authentication_required: the bank wants the customer present; else a decline. */
  reason: "authentication_required" | "declined";
}

/**
 * Sent once per exchange (key `exchange-charge-failed-<returnId>`) when the card saved at checkout
 * refused the difference: nothing is sent or charged until the shop hears from the customer, and
 * the order page (with its returns) is the link.
 */
export function exchangeChargeFailed(input: ExchangeChargeFailedInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const subject = `Your exchange for order ${reference} is on hold: the payment did not go through`;
  const amount = formatMoney(input.amount, input.order.currency);
  const items = input.lines.map((line) => `${line.quantity} × ${line.name}`).join(", ") || "your exchange";
  const why =
    input.reason === "authentication_required"
      ? "Your bank asked to confirm the payment with you, which it cannot do while you are away."
      : "Your bank declined it.";
  const next =
    "We have not sent the new items and have not charged you. Reply to this e-mail, or contact us, and we will settle it with you: another card, or a refund of the returned items instead.";
  const text = [
    `We tried to charge the difference of ${amount} for ${items} to the card you paid with.`,
    why,
    next,
    ...(input.order.orderUrl ? ["", `Your order: ${input.order.orderUrl}`] : []),
    "",
    orderLinesText(input.order),
  ].join("\n");
  const body = html`<p>
      We tried to charge the difference of ${amount} for ${items} to the card you paid with.
    </p>
    <p>${why}</p>
    <p>${next}</p>
    ${input.order.orderUrl ? html`<p><a href="${assertWebUrl(input.order.orderUrl)}">Your order</a></p>` : ""}
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
