import { assertWebUrl, html } from "./html";
import { htmlDocument, orderLinesHtml, orderLinesText, orderReference } from "./layout";
import type { EmailContent, OrderSummary } from "./types";

export interface ShippedParcel {
  carrier: string;
  trackingNumber: string;
  trackingUrl: string;
}

export interface ShippedInput extends ShippedParcel {
  order: OrderSummary;
  /** Every parcel of the order when it ships in more than one (the fields above: parcel 1). */
  parcels?: readonly ShippedParcel[];
  /** A re-shipped parcel: a new label replaces the one announced before. */
  replacement?: boolean;
}

export function shipped(input: ShippedInput): EmailContent {
  const reference = orderReference(input.order.orderId);
  const parcels = (input.parcels && input.parcels.length > 0 ? input.parcels : [input]).map((parcel) => ({
    ...parcel,
    trackingUrl: assertWebUrl(parcel.trackingUrl),
  }));
  const several = parcels.length > 1;
  const subject = input.replacement
    ? `A new parcel for your order ${reference}`
    : `Your order ${reference} is on its way`;
  const opening = input.replacement
    ? `We have sent part of your order ${reference} again, with a new tracking number; the earlier one no longer applies.`
    : several
      ? `Good news: your order ${reference} has shipped in ${parcels.length} parcels.`
      : `Good news: your order ${reference} has shipped with ${parcels[0]?.carrier ?? input.carrier}.`;
  const parcelText = parcels.flatMap((parcel, index) => [
    ...(several ? [`Parcel ${index + 1} of ${parcels.length} (${parcel.carrier})`] : []),
    `Tracking number: ${parcel.trackingNumber}`,
    `Track your parcel: ${parcel.trackingUrl}`,
    "",
  ]);
  const text = [
    opening,
    "",
    ...parcelText,
    orderLinesText(input.order),
    "",
    "Thank you for shopping with us.",
  ].join("\n");
  const body = html`<p>${opening}</p>
    ${parcels.map(
      (parcel, index) =>
        html`<p>
          ${several ? html`<strong>Parcel ${index + 1} of ${parcels.length}</strong> (${parcel.carrier})<br />` : ""}
          Tracking number: <strong>${parcel.trackingNumber}</strong><br />
          <a href="${parcel.trackingUrl}">Track your parcel</a>
        </p>`,
    )}
    ${orderLinesHtml(input.order)}
    <p>Thank you for shopping with us.</p>`;
  return { subject, text, html: htmlDocument(subject, body) };
}
