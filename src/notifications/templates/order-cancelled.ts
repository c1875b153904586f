import { html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import { formatMoney } from "./money";
import type { EmailContent, OrderSummary } from "./types";

/**
 * What happened to the customer's money: captured payments are refunded, holds are released, and
 * an order cancelled before any payment was authorised needs neither.
 */
export type CancellationSettlement =
  | { kind: "refunded"; /** Minor units. */ amount: number }
  | { kind: "authorization-voided" }
  | { kind: "not-charged" };

export interface OrderCancelledInput {
  order: OrderSummary;
  settlement: CancellationSettlement;
}

function settlementSentence(input: OrderCancelledInput): string {
  if (input.settlement.kind === "refunded") {
    const amount = formatMoney(input.settlement.amount, input.order.currency);
    return `We have refunded ${amount} to your card; depending on your bank it can take 5–10 days to appear.`;
  }
  if (input.settlement.kind === "authorization-voided") {
    return "Your card was never charged: the hold on it has been released.";
  }
  return "You have not been charged for this order.";
}

export function orderCancelled(input: OrderCancelledInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const subject = `Your order ${reference} has been cancelled`;
  const money = settlementSentence(input);
  const text = [`Your order ${reference} has been cancelled.`, money, "", orderLinesText(input.order)].join(
    "\n",
  );
  const body = html`<p>Your order <strong>${reference}</strong> has been cancelled.</p>
    <p>${money}</p>
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
