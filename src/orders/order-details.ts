import type { Database } from "../db/client";

/** The admin view of one order: everything that happened to it, in one read. */
export async function findOrderDetails(db: Database, orderId: string) {
  const order = await db.order.findUnique({
    where: { id: orderId },
    include: {
      lines: { orderBy: { sku: "asc" } },
      reservations: { orderBy: { sku: "asc" } },
      payment: true,
      shipment: true,
      emails: { orderBy: { createdAt: "asc" } },
      timeline: { orderBy: [{ createdAt: "asc" }, { id: "asc" }] },
      refunds: { orderBy: { createdAt: "asc" } },
      disputes: { orderBy: { createdAt: "asc" } },
    },
  });
  if (!order) return null;
  return {
    id: order.id,
    customerId: order.customerId,
    email: order.email,
    status: order.status,
    currency: order.currency,
    total: order.total,
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
    shipment: order.shipment && {
      carrier: order.shipment.carrier,
      trackingNumber: order.shipment.trackingNumber,
      trackingUrl: order.shipment.trackingUrl,
      service: order.shipment.service,
      labelUrl: order.shipment.labelUrl,
      trackerStatus: order.shipment.trackerStatus,
      status: order.shipment.status,
      deliveredAt: order.shipment.deliveredAt,
      labelRefundStatus: order.shipment.labelRefundStatus,
      labelRefundRequestedAt: order.shipment.labelRefundRequestedAt,
    },
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

export type OrderDetails = NonNullable<Awaited<ReturnType<typeof findOrderDetails>>>;
