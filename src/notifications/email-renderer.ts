import type { Database } from "../db/client";
import { defaultBrand, type Brand } from "../shared/brand";
import { brandEmail } from "./templates/brand";
import { customerSafeReason } from "./customer-messages";
import { shortLinesContent } from "./order-emails";
import {
  emailTemplates,
  toOrderSummary,
  type CancellationSettlement,
  type EmailContent,
  type EmailTemplateName,
} from "./templates";

/**
 * Renders an e-mail of an order again from what the database records about it (the shipment, the
 * timeline's outcome entries), for the ops console's view and for re-sending. The workflow's own
 * sends (order-emails.ts) render from the step's arguments; both use the same templates and links.
 */
export interface EmailRenderer {
  render(orderId: string, template: EmailTemplateName): Promise<EmailContent>;
}

function detailOf(entries: { kind: string; detail: unknown }[], kind: string): Record<string, unknown> {
  const entry = [...entries].reverse().find((e) => e.kind === kind);
  return (entry?.detail ?? {}) as Record<string, unknown>;
}

export function createEmailRenderer(deps: {
  db: Database;
  links: {
    order(orderId: string): string;
    review(orderId: string): string;
    track(trackingNumber: string): string;
    address(orderId: string): string;
  };
  /** The shop's brand, as the sender puts it on every e-mail (branded-email-sender.ts). */
  brand?: Brand;
}): EmailRenderer {
  const brand = deps.brand ?? defaultBrand;
  return {
    async render(orderId, template) {
      return brandEmail(await renderUnbranded(orderId, template), brand);
    },
  };
  async function renderUnbranded(orderId: string, template: EmailTemplateName): Promise<EmailContent> {
    const order = await deps.db.order.findUniqueOrThrow({
      where: { id: orderId },
      include: {
        lines: { orderBy: { sku: "asc" } },
        shipments: { where: { supersededAt: null }, orderBy: { parcelNumber: "asc" } },
        payment: true,
        timeline: { orderBy: { id: "asc" } },
      },
    });
    const summary = toOrderSummary(order, deps.links.order(order.id));
    const timeline = order.timeline;
    switch (template) {
      case "shipped": {
        const parcels = order.shipments.map(({ carrier, trackingNumber }) => ({
          carrier,
          trackingNumber,
          trackingUrl: deps.links.track(trackingNumber),
        }));
        const first = parcels[0];
        if (!first) throw new Error(`order ${orderId} has no shipment to announce`);
        return emailTemplates.shipped({ order: summary, ...first, parcels });
      }
      case "reviewRequest":
        return emailTemplates.reviewRequest({ order: summary, reviewUrl: deps.links.review(order.id) });
      case "paymentFailed": {
        const error = detailOf(timeline, "payment-failed").error;
        const reason = typeof error === "string" ? customerSafeReason(error) : undefined;
        return emailTemplates.paymentFailed(reason ? { order: summary, reason } : { order: summary });
      }
      case "outOfStock": {
        const sku = detailOf(timeline, "out-of-stock").sku;
        const name = order.lines.find((line) => line.sku === sku)?.name;
        const settlement = detailOf(timeline, "cancelled-out-of-stock").settlement;
        return emailTemplates.outOfStock({
          order: summary,
          unavailable: name ? [name] : [],
          refunded: settlement === "refunded",
        });
      }
      case "orderCancelled": {
        const settlement = detailOf(timeline, "cancelled").settlement;
        const kind: CancellationSettlement =
          settlement === "refunded"
            ? { kind: "refunded", amount: order.total }
            : settlement === "voided"
              ? { kind: "authorization-voided" }
              : { kind: "not-charged" };
        return emailTemplates.orderCancelled({ order: summary, settlement: kind });
      }
      case "freshLink":
        // The review link while the order can be reviewed (orders/review-order.ts's isReviewable:
        // not imported, orders already depends on notifications).
        return emailTemplates.freshLink({
          order: summary,
          ...(["shipped", "delivered", "completed"].includes(order.status)
            ? { reviewUrl: deps.links.review(order.id) }
            : {}),
        });
      case "addressCorrection": {
        const note = [...timeline]
          .reverse()
          .find((e) => e.kind === "hold-placed" && (e.detail as { reason?: string }).reason === "address");
        const message = (note?.detail as { note?: string } | undefined)?.note;
        return emailTemplates.addressCorrection({
          order: summary,
          carrierMessage: message ?? "The carrier could not confirm the address.",
          correctionUrl: deps.links.address(order.id),
        });
      }
      case "deliveryException": {
        const detail = detailOf(timeline, "carrier-exception");
        const kind = ["available_for_pickup", "failure", "return_to_sender"].includes(String(detail.status))
          ? (detail.status as "available_for_pickup" | "failure" | "return_to_sender")
          : "failure";
        const trackingNumber =
          (typeof detail.trackingNumber === "string" ? detail.trackingNumber : undefined) ??
          order.shipments[0]?.trackingNumber ??
          "";
        return emailTemplates.deliveryException({
          order: summary,
          kind,
          trackingNumber,
          trackingUrl: deps.links.track(trackingNumber),
          ...(typeof detail.message === "string" ? { carrierMessage: detail.message } : {}),
        });
      }
      case "shortLines": {
        const short = order.lines
          .filter((line) => line.shortQuantity > 0)
          .map((line) => ({
            sku: line.sku,
            short: line.shortQuantity,
            amount: line.unitPrice * line.shortQuantity,
          }));
        const settled = (kind: "short-lines-refunded" | "short-lines-refund-withheld") =>
          timeline.some((entry) => entry.kind === kind);
        const nameOf = (sku: string) => order.lines.find((line) => line.sku === sku)?.name ?? sku;
        return emailTemplates.shortLines(
          shortLinesContent(summary, nameOf, {
            short,
            settlement: settled("short-lines-refunded")
              ? "refunded"
              : settled("short-lines-refund-withheld")
                ? "withheld"
                : "not-charged",
          }),
        );
      }
      case "returnLabel": {
        // The latest return label sent: its entry carries what the e-mail said.
        const detail = detailOf(timeline, "return-label-sent");
        const text = (key: string) => (typeof detail[key] === "string" ? (detail[key] as string) : "");
        const trackingNumber = text("trackingNumber");
        return emailTemplates.returnLabel({
          order: summary,
          lines: Array.isArray(detail.lines) ? (detail.lines as { name: string; quantity: number }[]) : [],
          labelUrl: text("labelUrl"),
          trackingNumber,
          trackingUrl: text("trackingUrl") || deps.links.track(trackingNumber),
          refundAmount: typeof detail.refundAmount === "number" ? detail.refundAmount : 0,
        });
      }
      case "exchangeShipped": {
        const detail = detailOf(timeline, "exchange-sent");
        const trackingNumber = typeof detail.trackingNumber === "string" ? detail.trackingNumber : "";
        return emailTemplates.exchangeShipped({
          order: summary,
          lines: Array.isArray(detail.lines) ? (detail.lines as { name: string; quantity: number }[]) : [],
          trackingNumber,
          trackingUrl:
            typeof detail.trackingUrl === "string" ? detail.trackingUrl : deps.links.track(trackingNumber),
        });
      }
      case "exchangeChargeFailed": {
        const detail = detailOf(timeline, "exchange-charge-failed");
        return emailTemplates.exchangeChargeFailed({
          order: summary,
          lines: Array.isArray(detail.lines) ? (detail.lines as { name: string; quantity: number }[]) : [],
          amount: typeof detail.amount === "number" ? detail.amount : 0,
          reason: detail.reason === "authentication_required" ? "authentication_required" : "declined",
        });
      }
      case "exchangePaymentNeeded": {
        const detail = detailOf(timeline, "exchange-checkout-sent");
        return emailTemplates.exchangePaymentNeeded({
          order: summary,
          lines: Array.isArray(detail.lines) ? (detail.lines as { name: string; quantity: number }[]) : [],
          amount: typeof detail.amount === "number" ? detail.amount : 0,
          payUrl: typeof detail.payUrl === "string" ? detail.payUrl : (summary.orderUrl ?? ""),
          payBy: typeof detail.payBy === "string" ? detail.payBy : "",
        });
      }
      case "refunded": {
        // The latest refund; "full" once everything captured has been returned.
        const amount = detailOf(timeline, "refund-issued").amount;
        const payment = order.payment;
        return emailTemplates.refunded({
          order: summary,
          amount: typeof amount === "number" ? amount : (payment?.amountRefunded ?? 0),
          full:
            payment !== null &&
            payment.amountCaptured > 0 &&
            payment.amountRefunded >= payment.amountCaptured,
        });
      }
    }
  }
}
