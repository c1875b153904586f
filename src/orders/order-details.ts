import type { Database } from "../db/client";
import type { Shipment } from "../generated/prisma/client";
import { storedBreakdown } from "../payments/money-breakdown";

/** The admin view of one order: everything that happened to it, in one read. */
export async function findOrderDetails(db: Database, orderId: string) {
  const order = await db.order.findUnique({
    where: { id: orderId },
    include: {
      lines: { orderBy: { sku: "asc" } },
      reservations: { orderBy: { sku: "asc" } },
      payment: true,
      shipments: { orderBy: [{ parcelNumber: "asc" }, { generation: "asc" }] },
      emails: { orderBy: { createdAt: "asc" } },
      timeline: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
      refunds: { orderBy: { createdAt: "asc" } },
      disputes: { orderBy: { createdAt: "asc" } },
    },
  });
  if (!order) return null;
  const current = order.shipments.filter((shipment) => shipment.supersededAt === null);
  return {
    id: order.id,
    customerId: order.customerId,
    email: order.email,
    status: order.status,
    currency: order.currency,
    total: order.total,
    // Stripe's breakdown as recorded at intake (subtotal, shipping, discount, tax, per line); null
    // for an order without one (its lines make its total).
    money: storedBreakdown(order.moneyBreakdown),
    checkoutSessionId: order.checkoutSessionId,
    paymentIntentId: order.paymentIntentId,
    attentionReason: order.attentionReason,
    cancelRequestedAt: order.cancelRequestedAt,
    hold: order.holdReason
      ? { reason: order.holdReason, note: order.holdNote, since: order.heldAt, by: order.heldBy }
      : null,
    shippingAddress: order.shippingAddress,
    createdAt: order.createdAt,
    updatedAt: order.updatedAt,
    // shortQuantity: units not reserved, so not shipped nor charged (partial fulfilment).
    lines: order.lines.map(({ sku, name, unitPrice, quantity, shortQuantity }) => ({
      sku,
      name,
      unitPrice,
      quantity,
      shortQuantity,
    })),
    reservations: order.reservations.map(({ sku, quantity, status }) => ({ sku, quantity, status })),
    payment: order.payment && {
      status: order.payment.status,
      providerId: order.payment.providerId,
      amountAuthorized: order.payment.amountAuthorized,
      amountCaptured: order.payment.amountCaptured,
      amountRefunded: order.payment.amountRefunded,
      refunds: order.refunds.map(({ id, amount, currency, reason, status, providerId, createdAt }) => ({
        id,
        amount,
        currency: currency.trim(),
        reason,
        status,
        providerId,
        createdAt,
      })),
      // Chargebacks: what Stripe withdrew from the balance for them, and gave back.
      amountDisputeWithdrawn: order.disputes.reduce((sum, d) => sum + d.amountWithdrawn, 0),
      amountDisputeReinstated: order.disputes.reduce((sum, d) => sum + d.amountReinstated, 0),
      disputes: order.disputes.map((d) => ({
        providerId: d.providerId,
        status: d.status,
        amount: d.amount,
        currency: d.currency.trim(),
        reason: d.reason,
        evidenceDueBy: d.evidenceDueBy,
        amountWithdrawn: d.amountWithdrawn,
        amountReinstated: d.amountReinstated,
        fees: d.fees,
        createdAt: d.createdAt,
        updatedAt: d.updatedAt,
      })),
    },
    // Parcel 1's current label: what this field was when an order had one parcel.
    shipment: current[0] ? shipmentView(current[0]) : null,
    // Every label of the order, parcel by parcel; a re-shipped parcel's old labels are superseded.
    shipments: order.shipments.map(shipmentView),
    emails: order.emails.map(({ id, idempotencyKey, template, recipient, status, messageId, sentAt }) => ({
      id,
      idempotencyKey,
      recipient,
      template,
      status,
      messageId,
      sentAt,
    })),
    timeline: order.timeline.map(({ kind, detail, runId, createdAt }) => ({
      kind,
      detail,
      runId,
      at: createdAt,
    })),
  };
}

function shipmentView(shipment: Shipment) {
  return {
    id: shipment.id,
    parcelNumber: shipment.parcelNumber,
    generation: shipment.generation,
    lines: Array.isArray(shipment.lines) ? (shipment.lines as { sku: string; quantity: number }[]) : [],
    supersededAt: shipment.supersededAt,
    carrier: shipment.carrier,
    trackingNumber: shipment.trackingNumber,
    trackingUrl: shipment.trackingUrl,
    service: shipment.service,
    labelUrl: shipment.labelUrl,
    // What EasyPost charged for the label (decision 0203); null for labels bought before.
    labelCost: shipment.labelCost,
    labelCurrency: shipment.labelCurrency,
    trackerStatus: shipment.trackerStatus,
    status: shipment.status,
    deliveredAt: shipment.deliveredAt,
    labelRefundStatus: shipment.labelRefundStatus,
    labelRefundRequestedAt: shipment.labelRefundRequestedAt,
  };
}

export type OrderDetails = NonNullable<Awaited<ReturnType<typeof findOrderDetails>>>;
