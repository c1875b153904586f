import type { Database } from "../db/client";
import type { EmailSender, OrderForEmail } from "./email-sender";
import {
  emailKeys,
  customerSafeReason,
  type CustomerMessages,
  type EmailOutcome,
  type OrderCompletion,
  type OutcomeRecord,
  type PaymentSettlement,
  type ShortLinesNotice,
} from "./customer-messages";
import { emailTemplates, toOrderSummary, type CancellationSettlement, type OrderSummary } from "./templates";

/** The short-lines e-mail's content from the order and the notice (shared with the re-render). */
export function shortLinesContent(
  order: OrderSummary & { lines: readonly { name: string; quantity: number }[] },
  nameOf: (sku: string) => string,
  notice: ShortLinesNotice,
) {
  const missing = new Map(notice.short.map((line) => [nameOf(line.sku), line.short]));
  return {
    order,
    short: notice.short.map((line) => ({
      name: nameOf(line.sku),
      quantity: line.short,
      amount: line.amount,
    })),
    shipping: order.lines
      .map((line) => ({ name: line.name, quantity: line.quantity - (missing.get(line.name) ?? 0) }))
      .filter((line) => line.quantity > 0),
    settlement: notice.settlement,
    amount: notice.short.reduce((sum, line) => sum + line.amount, 0),
  };
}

/** CustomerMessages on top of the idempotent sender: loads the order, renders, sends once per key. */
export function createOrderEmails(deps: {
  db: Database;
  sender: EmailSender;
  /** Signed links to the customer's order and review pages (src/pages/links.ts). */
  links: {
    order(orderId: string): string;
    review(orderId: string): string;
    track(trackingNumber: string): string;
    address(orderId: string): string;
  };
  /** Hears of every status change an e-mail's statement makes (the transitions' metrics). */
  onTransition?: (to: OrderCompletion["to"]) => void;
}): CustomerMessages {
  const { sender, links } = deps;

  /** What the templates take of the order read with the e-mail's claim. */
  function toRendering(order: OrderForEmail) {
    const names = new Map(order.lines.map((line) => [line.sku, line.name]));
    return {
      summary: toOrderSummary(order, links.order(order.id)),
      nameOf: (sku: string) => names.get(sku) ?? sku,
    };
  }

  function settlementOf(settlement: PaymentSettlement, order: OrderSummary): CancellationSettlement {
    if (settlement === "refunded") return { kind: "refunded", amount: order.total };
    return settlement === "voided" ? { kind: "authorization-voided" } : { kind: "not-charged" };
  }

  async function send<Name extends keyof typeof emailTemplates>(
    orderId: string,
    idempotencyKey: string,
    template: Name,
    content: (
      order: OrderSummary,
      nameOf: (sku: string) => string,
    ) => Parameters<(typeof emailTemplates)[Name]>[0],
    record?: OutcomeRecord,
    completion?: OrderCompletion,
  ): Promise<EmailOutcome> {
    const render = emailTemplates[template] as (
      input: ReturnType<typeof content>,
    ) => ReturnType<(typeof emailTemplates)[Name]>;
    // The order is read in the claim's statement and rendered once the e-mail is leased.
    const result = await sender.sendToOrder({
      idempotencyKey,
      orderId,
      template,
      render: (order) => {
        const { summary, nameOf } = toRendering(order);
        return render(content(summary, nameOf));
      },
      ...(record ? { entry: { ...record, detail: (outcome) => ({ ...outcome }) } } : {}),
      ...(completion
        ? {
            entry: {
              kind: completion.kind,
              runId: completion.runId,
              detail: (outcome) => ({ ...outcome, ...completion.detail }),
            },
            move: {
              from: completion.from,
              to: completion.to,
              onMoved: () => deps.onTransition?.(completion.to),
            },
          }
        : {}),
    });
    return { idempotencyKey, ...result };
  }

  return {
    shipped: (orderId, shipments, record) => {
      // Our own tracking page (any carrier), which links on to the carrier's.
      const parcels = shipments.map(({ carrier, trackingNumber }) => ({
        carrier,
        trackingNumber,
        trackingUrl: links.track(trackingNumber),
      }));
      const first = parcels[0];
      if (!first) throw new Error(`order ${orderId}: no parcel to announce`);
      return send(
        orderId,
        emailKeys.shipped(orderId),
        "shipped",
        (order) => ({ order, ...first, parcels }),
        record,
      );
    },
    reshipped: (orderId, shipmentId, parcel) =>
      send(orderId, emailKeys.reshipped(shipmentId), "shipped", (order) => ({
        order,
        carrier: parcel.carrier,
        trackingNumber: parcel.trackingNumber,
        trackingUrl: links.track(parcel.trackingNumber),
        replacement: true,
      })),
    reviewRequest: (orderId, completion) =>
      send(
        orderId,
        emailKeys.reviewRequest(orderId),
        "reviewRequest",
        (order) => ({ order, reviewUrl: links.review(orderId) }),
        undefined,
        completion,
      ),
    paymentFailed: (orderId, failure) =>
      send(orderId, emailKeys.paymentFailed(orderId), "paymentFailed", (order) => {
        const reason = customerSafeReason(failure);
        return reason ? { order, reason } : { order };
      }),
    outOfStock: (orderId, sku, settlement) =>
      send(orderId, emailKeys.outOfStock(orderId), "outOfStock", (order, nameOf) => ({
        order,
        unavailable: [nameOf(sku)],
        refunded: settlement === "refunded",
      })),
    cancelled: (orderId, settlement) =>
      send(orderId, emailKeys.cancelled(orderId), "orderCancelled", (order) => ({
        order,
        settlement: settlementOf(settlement, order),
      })),
    shortLines: (orderId, notice) =>
      send(orderId, emailKeys.shortLines(orderId), "shortLines", (order, nameOf) =>
        shortLinesContent(order, nameOf, notice),
      ),
    deliveryException: (orderId, { parcel, ...exception }) =>
      send(
        orderId,
        emailKeys.deliveryException(orderId, exception.kind, parcel),
        "deliveryException",
        (order) => ({
          order,
          ...exception,
          trackingUrl: links.track(exception.trackingNumber),
        }),
      ),
    addressUndeliverable: (orderId, carrierMessage, holdId) =>
      send(orderId, emailKeys.addressCorrection(orderId, holdId), "addressCorrection", (order) => ({
        order,
        carrierMessage,
        correctionUrl: links.address(orderId),
      })),
  };
}
