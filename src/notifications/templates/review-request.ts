import { assertWebUrl, html } from "./html";
import { htmlDocument, orderLinkHtml, orderLinkText, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

export interface ReviewRequestInput {
  order: OrderSummary;
  /** The review page's signed link (src/pages/links.ts): only this order's customer can review it. */
  reviewUrl: string;
}

export function reviewRequest(input: ReviewRequestInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const reviewUrl = assertWebUrl(input.reviewUrl);
  const subject = `How was your order ${reference}?`;
  const items = input.order.lines.map((line) => line.name);
  const text = [
    `We hope you are enjoying your order ${reference}.`,
    "",
    `Would you tell other customers what you think of ${items.join(", ")}?`,
    `Write a review: ${reviewUrl}`,
    "",
    "It takes a minute and helps a lot. Thank you!",
    ...orderLinkText(input.order),
  ].join("\n");
  const body = html`<p>We hope you are enjoying your order <strong>${reference}</strong>.</p>
    <p>Would you tell other customers what you think of ${items.join(", ")}?</p>
    <p><a href="${reviewUrl}">Write a review</a></p>
    <p>It takes a minute and helps a lot. Thank you!</p>
    ${orderLinkHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
