import { html } from "./html";
import { htmlDocument, orderLinkHtml, orderLinkText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

export interface ShortLinesInput {
  order: OrderSummary;
  /** The lines (or the part of a line) that could not be reserved: not shipped. */
  short: readonly { name: string; quantity: number; amount: number }[];
  /** What ships: the lines and quantities that were reserved. */
  shipping: readonly { name: string; quantity: number }[];
  /**
   * `not-charged`: only the shipped lines were captured, the rest of the hold on the card was
   * released; `refunded`: the whole order had been charged, the short lines were refunded;
   * `withheld`: charged, and the payment is disputed, so their money is settled with the dispute.
   */
  settlement: "not-charged" | "refunded" | "withheld";
  /** The amount not charged, or refunded, in minor units. */
  amount: number;
}

function moneySentence(input: ShortLinesInput, amount: string): string {
  switch (input.settlement) {
    case "refunded":
      return `We have refunded ${amount} for them to your card; depending on your bank it can take 5–10 days to appear.`;
    case "withheld":
      // The money is under review by the card issuer: no promise of a refund the dispute may decide.
      return `Their price (${amount}) is part of a payment your card issuer is reviewing with us (a dispute), so it will be settled through that review; we will contact you once it is decided.`;
    default:
      return `You have not been charged for them: we took only the price of what ships, and the rest of the hold of the order on your card (${amount}) has been released.`;
  }
}

/** Part of the order could not be reserved: what ships, what does not, and the money for it. */
export function shortLines(input: ShortLinesInput): EmailContent {
  const { order } = input;
  const reference = orderReference(order.orderId);
  const amount = formatMoney(input.amount, order.currency);
  const subject = `Part of order ${reference} is not available`;
  const shortText = input.short.map(
    (line) => `  ${line.quantity} × ${line.name}  ${formatMoney(line.amount, order.currency)}`,
  );
  const shippingText = input.shipping.map((line) => `  ${line.quantity} × ${line.name}`);
  const text = [
    `We are sorry: some items of your order ${reference} sold out before we could reserve them, so they will not ship.`,
    "",
    "Not available:",
    ...shortText,
    "",
    moneySentence(input, amount),
    "",
    "On its way to you as planned:",
    ...shippingText,
    ...orderLinkText(order),
  ].join("\n");
  const body = html`<p>
      We are sorry: some items of your order <strong>${reference}</strong> sold out before we could reserve
      them, so they will not ship.
    </p>
    <p><strong>Not available</strong></p>
    <ul>
      ${input.short.map(
        (line) =>
          html`<li>${line.quantity} × ${line.name} (${formatMoney(line.amount, order.currency)})</li>`,
      )}
    </ul>
    <p>${moneySentence(input, amount)}</p>
    <p><strong>On its way to you as planned</strong></p>
    <ul>
      ${input.shipping.map((line) => html`<li>${line.quantity} × ${line.name}</li>`)}
    </ul>
    ${orderLinkHtml(order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
