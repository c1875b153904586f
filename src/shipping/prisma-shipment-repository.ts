import { sqlPool, type Database } from "../db/client";
import { AppError } from "../errors";
import type { LabelRefundStatus } from "./shipping-provider";
import type { ShipmentRecord, ShipmentRepository } from "./shipment-repository";

const labelRefundStatuses: readonly string[] = ["submitted", "refunded", "rejected"];
const asLabelRefundStatus = (status: string | null): LabelRefundStatus | null =>
  status !== null && labelRefundStatuses.includes(status) ? (status as LabelRefundStatus) : null;

function toRecord(row: {
  orderId: string;
  carrier: string;
  trackingNumber: string;
  trackingUrl: string;
  service: string | null;
  labelUrl: string | null;
  providerId: string | null;
  trackerStatus: string | null;
  status: "booked" | "delivered";
  deliveredAt: Date | null;
  labelRefundStatus: string | null;
}): ShipmentRecord {
  return {
    orderId: row.orderId,
    carrier: row.carrier,
    trackingNumber: row.trackingNumber,
    trackingUrl: row.trackingUrl,
    service: row.service,
    labelUrl: row.labelUrl,
    providerId: row.providerId,
    trackerStatus: row.trackerStatus,
    status: row.status,
    deliveredAt: row.deliveredAt,
    labelRefundStatus: asLabelRefundStatus(row.labelRefundStatus),
  };
}

export function createShipmentRepository(db: Database): ShipmentRepository {
  const sql = sqlPool(db);
  /** Raw pg: the workflow's create-shipment step asks it on every order (docs/benchmarks.md). */
  async function findByOrderId(orderId: string): Promise<ShipmentRecord | null> {
    const { rows } = await sql.query<ShipmentRecord>(
      `SELECT order_id AS "orderId", carrier, tracking_number AS "trackingNumber",
              tracking_url AS "trackingUrl", service, label_url AS "labelUrl",
              provider_id AS "providerId", tracker_status AS "trackerStatus", status::text AS status,
              delivered_at AS "deliveredAt", label_refund_status AS "labelRefundStatus"
       FROM shipments WHERE order_id = $1::uuid`,
      [orderId],
    );
    const row = rows[0];
    return row ? { ...row, labelRefundStatus: asLabelRefundStatus(row.labelRefundStatus) } : null;
  }

  return {
    async recordBooked(orderId, booking) {
      // ON CONFLICT DO NOTHING: two concurrent recordings of one order leave one row, no error.
      const { carrier, trackingNumber, trackingUrl, service, labelUrl, providerId } = booking;
      await db.shipment.createMany({
        data: [{ orderId, carrier, trackingNumber, trackingUrl, service, labelUrl, providerId }],
        skipDuplicates: true,
      });
      const recorded = await findByOrderId(orderId);
      if (!recorded) {
        throw new AppError(
          "conflict",
          `tracking number ${booking.trackingNumber} is already used by another order`,
        );
      }
      return recorded;
    },

    findByOrderId,

    async findByTrackingNumber(trackingNumber) {
      const row = await db.shipment.findUnique({ where: { trackingNumber } });
      return row ? toRecord(row) : null;
    },

    async recordTrackerStatus(trackingNumber, status) {
      await db.shipment.updateMany({ where: { trackingNumber }, data: { trackerStatus: status } });
      const row = await db.shipment.findUnique({ where: { trackingNumber } });
      return row ? toRecord(row) : null;
    },

    async recordLabelRefund(orderId, status) {
      // Compare-and-set on the status read: of two recorders of one change, one sees it change.
      const row = await db.shipment.findUnique({ where: { orderId } });
      if (!row) return null;
      const updated = await db.shipment.updateMany({
        where: { orderId, labelRefundStatus: row.labelRefundStatus },
        data: {
          labelRefundStatus: status,
          ...(row.labelRefundRequestedAt ? {} : { labelRefundRequestedAt: new Date() }),
        },
      });
      return updated.count === 1 ? asLabelRefundStatus(row.labelRefundStatus) : status;
    },

    async markDelivered(ref, at) {
      // Conditional on `booked`, so concurrent webhook deliveries flip the row once.
      const flipped = await db.shipment.updateMany({
        where: { ...ref, status: "booked" },
        data: { status: "delivered", deliveredAt: at, trackerStatus: "delivered" },
      });
      const row =
        "orderId" in ref
          ? await db.shipment.findUnique({ where: { orderId: ref.orderId } })
          : await db.shipment.findUnique({ where: { trackingNumber: ref.trackingNumber } });
      if (!row) return { outcome: "not-found" };
      return { outcome: flipped.count === 1 ? "delivered" : "already-delivered", shipment: toRecord(row) };
    },
  };
}
