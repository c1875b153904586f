import { assertWebUrl, html } from "./html";
import { htmlDocument, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

export interface FreshLinkInput {
  /** With the order page's freshly signed link. */
  order: OrderSummary;
  /** The review page's freshly signed link, while the order can be reviewed. */
  reviewUrl?: string;
}

/** Asked for from an expired link's page: the order's links again, signed anew. */
export function freshLink(input: FreshLinkInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const orderUrl = assertWebUrl(input.order.orderUrl ?? "");
  const reviewUrl = input.reviewUrl === undefined ? undefined : assertWebUrl(input.reviewUrl);
  const subject = `A fresh link to your order ${reference}`;
  const text = [
    `You asked for a fresh link to your order ${reference}; the one you opened had expired.`,
    "",
    `View your order: ${orderUrl}`,
    ...(reviewUrl ? [`Write a review: ${reviewUrl}`] : []),
    "",
    "If you did not ask for this, you can ignore this e-mail: nothing has changed.",
  ].join("\n");
  const body = html`<p>
      You asked for a fresh link to your order <strong>${reference}</strong>; the one you opened had expired.
    </p>
    <p><a href="${orderUrl}">View your order</a></p>
    ${reviewUrl ? html`<p><a href="${reviewUrl}">Write a review</a></p>` : html``}
    <p>If you did not ask for this, you can ignore this e-mail: nothing has changed.</p>`;
  return { subject, text, html: htmlDocument(subject, body) };
}
