import { sqlPool, type Database } from "../db/client";
import { AppError } from "../errors";
import { reshipMayLand } from "../shared/order-model";
import type { LabelRefundStatus } from "./shipping-provider";
import {
  currentParcels,
  type ParcelLine,
  type ShipmentRecord,
  type ShipmentRepository,
} from "./shipment-repository";

const labelRefundStatuses: readonly string[] = ["submitted", "refunded", "rejected", "not_applicable"];
const asLabelRefundStatus = (status: string | null): LabelRefundStatus | null =>
  status !== null && labelRefundStatuses.includes(status) ? (status as LabelRefundStatus) : null;

/** The `lines` column, as written by recordBooked: anything else reads as no lines. */
export function asLines(value: unknown): ParcelLine[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((line: unknown) => {
    const { sku, quantity } = (line ?? {}) as { sku?: unknown; quantity?: unknown };
    return typeof sku === "string" && typeof quantity === "number" ? [{ sku, quantity }] : [];
  });
}

type ShipmentRow = Omit<ShipmentRecord, "labelRefundStatus" | "lines" | "labelAmount" | "labelCurrency"> & {
  labelRefundStatus: string | null;
  lines: unknown;
  labelCost: number | null;
  labelCurrency: string | null;
};

function toRecord(row: ShipmentRow): ShipmentRecord {
  return {
    id: row.id,
    orderId: row.orderId,
    parcelNumber: row.parcelNumber,
    generation: row.generation,
    lines: asLines(row.lines),
    supersededAt: row.supersededAt,
    carrier: row.carrier,
    trackingNumber: row.trackingNumber,
    trackingUrl: row.trackingUrl,
    service: row.service ?? null,
    labelUrl: row.labelUrl ?? null,
    providerId: row.providerId ?? null,
    labelAmount: row.labelCost ?? null,
    labelCurrency: row.labelCurrency ?? null,
    trackerStatus: row.trackerStatus,
    status: row.status,
    deliveredAt: row.deliveredAt,
    labelRefundStatus: asLabelRefundStatus(row.labelRefundStatus),
  };
}

const shipmentColumns = `id, order_id AS "orderId", parcel_number AS "parcelNumber", generation, lines,
       superseded_at AS "supersededAt", carrier, tracking_number AS "trackingNumber",
       tracking_url AS "trackingUrl", service, label_url AS "labelUrl", provider_id AS "providerId",
       label_cost AS "labelCost", label_currency AS "labelCurrency", tracker_status AS "trackerStatus", status::text AS status, delivered_at AS "deliveredAt",
       label_refund_status AS "labelRefundStatus"`;

export function createShipmentRepository(db: Database): ShipmentRepository {
  const sql = sqlPool(db);
  /** Raw pg: the workflow's create-shipment step asks it on every order (docs/benchmarks.md). */
  async function listByOrder(orderId: string): Promise<ShipmentRecord[]> {
    const { rows } = await sql.query<ShipmentRow>(
      `SELECT ${shipmentColumns} FROM shipments WHERE order_id = $1::uuid
       ORDER BY parcel_number, generation`,
      [orderId],
    );
    return rows.map(toRecord);
  }
  const findById = async (id: string) => {
    const row = await db.shipment.findUnique({ where: { id } });
    return row ? toRecord(row) : null;
  };

  return {
    async recordBooked(orderId, booking, parcel) {
      // skipDuplicates: two concurrent recordings of one parcel leave one row, no error.
      const { carrier, trackingNumber, trackingUrl, service, labelUrl, providerId } = booking;
      const labelCost = booking.labelAmount ?? null;
      const labelCurrency = booking.labelCurrency ?? null;
      const parcelNumber = parcel?.parcelNumber ?? 1;
      const generation = parcel?.generation ?? 0;
      await db.shipment.createMany({
        data: [
          {
            orderId,
            parcelNumber,
            generation,
            ...(parcel?.lines ? { lines: parcel.lines.map(({ sku, quantity }) => ({ sku, quantity })) } : {}),
            carrier,
            trackingNumber,
            trackingUrl,
            service,
            labelUrl,
            providerId,
            labelCost,
            labelCurrency,
          },
        ],
        skipDuplicates: true,
      });
      const recorded = await db.shipment.findUnique({
        where: { orderId_parcelNumber_generation: { orderId, parcelNumber, generation } },
      });
      if (!recorded) {
        throw new AppError(
          "conflict",
          `tracking number ${booking.trackingNumber} is already used by another order`,
        );
      }
      return toRecord(recorded);
    },

    listByOrder,
    findById,

    async findByTrackingNumber(trackingNumber) {
      const row = await db.shipment.findUnique({ where: { trackingNumber } });
      return row ? toRecord(row) : null;
    },

    async recordTrackerStatus(trackingNumber, status) {
      await db.shipment.updateMany({ where: { trackingNumber }, data: { trackerStatus: status } });
      const row = await db.shipment.findUnique({ where: { trackingNumber } });
      return row ? toRecord(row) : null;
    },

    async recordLabelRefund(shipmentId, status) {
      // Compare-and-set on the status read: of two recorders of one change, one sees it change.
      const row = await db.shipment.findUnique({ where: { id: shipmentId } });
      if (!row) return null;
      const updated = await db.shipment.updateMany({
        where: { id: shipmentId, labelRefundStatus: row.labelRefundStatus },
        data: {
          labelRefundStatus: status,
          ...(row.labelRefundRequestedAt ? {} : { labelRefundRequestedAt: new Date() }),
        },
      });
      return updated.count === 1 ? asLabelRefundStatus(row.labelRefundStatus) : status;
    },

    async markLabelRefundsTracked(orderId) {
      const marked = await db.shipment.updateMany({
        where: { orderId, labelRefundStatus: "submitted", labelRefundTrackedAt: null },
        data: { labelRefundTrackedAt: new Date() },
      });
      return marked.count;
    },

    async untrackedLabelRefunds(before, limit) {
      const rows = await db.shipment.findMany({
        where: {
          labelRefundStatus: "submitted",
          labelRefundTrackedAt: null,
          labelRefundRequestedAt: { lt: before },
        },
        orderBy: { labelRefundRequestedAt: "asc" },
        take: limit,
      });
      return rows.map(toRecord);
    },

    async markDelivered(ref, at) {
      const where = "shipmentId" in ref ? { id: ref.shipmentId } : { trackingNumber: ref.trackingNumber };
      // Conditional on `booked`, so concurrent webhook deliveries flip the row once.
      const flipped = await db.shipment.updateMany({
        where: { ...where, status: "booked" },
        data: { status: "delivered", deliveredAt: at, trackerStatus: "delivered" },
      });
      const row = await db.shipment.findUnique({ where });
      if (!row) return { outcome: "not-found" };
      return { outcome: flipped.count === 1 ? "delivered" : "already-delivered", shipment: toRecord(row) };
    },

    async deliveryOf(orderId) {
      // Read after this caller's own delivery committed: of two parcels delivered at once, the
      // later reader sees both (each webhook marks its row, then reads), so one of them says "all".
      const parcels = currentParcels(await listByOrder(orderId));
      const delivered = parcels.filter((parcel) => parcel.status === "delivered");
      const all = parcels.length > 0 && delivered.length === parcels.length;
      const last = all
        ? [...delivered].sort(
            (a, b) =>
              (a.deliveredAt?.getTime() ?? 0) - (b.deliveredAt?.getTime() ?? 0) ||
              a.parcelNumber - b.parcelNumber,
          )[delivered.length - 1]
        : undefined;
      return {
        parcels: parcels.length,
        delivered: delivered.length,
        deliveredAt: last?.deliveredAt ?? null,
        lastTrackingNumber: last?.trackingNumber ?? null,
      };
    },

    async startReship(shipmentId, leaseMs) {
      // One conditional UPDATE: of two re-ship requests at once, one takes the lease.
      const taken = await db.shipment.updateMany({
        where: {
          id: shipmentId,
          supersededAt: null,
          status: "booked",
          OR: [{ reshipStartedAt: null }, { reshipStartedAt: { lt: new Date(Date.now() - leaseMs) } }],
        },
        data: { reshipStartedAt: new Date() },
      });
      return taken.count === 1;
    },

    async releaseReship(shipmentId) {
      await db.shipment.updateMany({ where: { id: shipmentId }, data: { reshipStartedAt: null } });
    },

    async recordReship(old, booking) {
      const next = { orderId: old.orderId, parcelNumber: old.parcelNumber, generation: old.generation + 1 };
      const row = await db.$transaction(async (tx) => {
        // The order row first, as every guarded write locks it: a cancel waits, or is seen.
        const [order] = await tx.$queryRaw<{ status: string; cancel_requested: boolean }[]>`
          SELECT status::text AS status, cancel_requested_at IS NOT NULL AS cancel_requested
          FROM orders WHERE id = ${old.orderId}::uuid FOR UPDATE`;
        if (!order || !reshipMayLand({ status: order.status, cancelRequested: order.cancel_requested })) {
          return "refused" as const;
        }
        await tx.shipment.updateMany({
          where: { id: old.id, supersededAt: null },
          data: { supersededAt: new Date(), reshipStartedAt: null },
        });
        await tx.shipment.createMany({
          data: [
            {
              ...next,
              lines: old.lines.map(({ sku, quantity }) => ({ sku, quantity })),
              carrier: booking.carrier,
              trackingNumber: booking.trackingNumber,
              trackingUrl: booking.trackingUrl,
              service: booking.service ?? null,
              labelUrl: booking.labelUrl ?? null,
              providerId: booking.providerId ?? null,
              labelCost: booking.labelAmount ?? null,
              labelCurrency: booking.labelCurrency ?? null,
            },
          ],
          skipDuplicates: true,
        });
        return tx.shipment.findUnique({ where: { orderId_parcelNumber_generation: next } });
      });
      if (row === "refused") return null;
      if (!row) throw new AppError("conflict", `tracking number ${booking.trackingNumber} is already used`);
      return toRecord(row);
    },
  };
}
