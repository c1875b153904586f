import { html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

/** The carrier statuses a customer hears about: they must act (pick up) or wait (retry, return). */
export type DeliveryExceptionKind = "available_for_pickup" | "failure" | "return_to_sender";

export interface DeliveryExceptionInput {
  order: OrderSummary;
  kind: DeliveryExceptionKind;
  trackingNumber: string;
  trackingUrl: string;
  /** The carrier's own message, when it gave one. */
  carrierMessage?: string;
}

const wording: Record<DeliveryExceptionKind, { subject: string; lead: string; next: string }> = {
  available_for_pickup: {
    subject: "is waiting for you to pick it up",
    lead: "The carrier is holding your parcel for pickup.",
    next: "Please collect it soon: the carrier returns parcels that are not picked up.",
  },
  failure: {
    subject: "could not be delivered today",
    lead: "The carrier tried to deliver your parcel and could not.",
    next: "The carrier usually tries again; the tracking page says when. We are keeping an eye on it.",
  },
  return_to_sender: {
    subject: "is on its way back to us",
    lead: "The carrier is returning your parcel to us.",
    next: "We will be in touch once it arrives, to send it again or refund you.",
  },
};

export function deliveryException(input: DeliveryExceptionInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const words = wording[input.kind];
  const subject = `Your order ${reference} ${words.subject}`;
  const text = [
    words.lead,
    ...(input.carrierMessage ? [`The carrier says: ${input.carrierMessage}`] : []),
    words.next,
    "",
    `Tracking ${input.trackingNumber}: ${input.trackingUrl}`,
    "",
    orderLinesText(input.order),
  ].join("\n");
  const body = html`<p>${words.lead}</p>
    ${input.carrierMessage ? html`<p>The carrier says: ${input.carrierMessage}</p>` : ""}
    <p>${words.next}</p>
    <p>Tracking <a href="${input.trackingUrl}">${input.trackingNumber}</a></p>
    ${orderLinesHtml(input.order)}`;
  return { subject, text, html: htmlDocument(subject, body) };
}
