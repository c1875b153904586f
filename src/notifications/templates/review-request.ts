import { assertWebUrl, html } from "./html";
import { htmlDocument, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

export interface ReviewRequestInput {
  order: OrderSummary;
  /** PUBLIC_URL of the shop; the review page lives under it. */
  publicUrl: string;
}

export function reviewPageUrl(publicUrl: string, orderId: string): string {
  const base = publicUrl.endsWith("/") ? publicUrl : `${publicUrl}/`;
  return assertWebUrl(new URL(`orders/${encodeURIComponent(orderId)}/review`, base).toString());
}

export function reviewRequest(input: ReviewRequestInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const reviewUrl = reviewPageUrl(input.publicUrl, input.order.orderId);
  const subject = `How was your order ${reference}?`;
  const items = input.order.lines.map((line) => line.name);
  const text = [
    `We hope you are enjoying your order ${reference}.`,
    "",
    `Would you tell other customers what you think of ${items.join(", ")}?`,
    `Write a review: ${reviewUrl}`,
    "",
    "It takes a minute and helps a lot. Thank you!",
  ].join("\n");
  const body = html`<p>We hope you are enjoying your order <strong>${reference}</strong>.</p>
    <p>Would you tell other customers what you think of ${items.join(", ")}?</p>
    <p><a href="${reviewUrl}">Write a review</a></p>
    <p>It takes a minute and helps a lot. Thank you!</p>`;
  return { subject, text, html: htmlDocument(subject, body) };
}
