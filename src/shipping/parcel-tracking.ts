import type { Database } from "../db/client";

/** The public tracking page's view of a parcel, by its tracking number, or null. */
export function createParcelTracking(db: Database) {
  return {
    find: (trackingNumber: string) =>
      db.shipment.findUnique({
        where: { trackingNumber },
        select: {
          carrier: true,
          trackingNumber: true,
          trackingUrl: true,
          trackerStatus: true,
          status: true,
          deliveredAt: true,
          createdAt: true,
          updatedAt: true,
        },
      }),
  };
}

export type ParcelTracking = ReturnType<typeof createParcelTracking>;
