import { z } from "zod";
import { sqlPool, type Database } from "../db/client";
import type { ShippingDestinations } from "./shipment-booking";
import type { ShippingAddress } from "./shipping-provider";

/** The order's `shipping_address` column, as the Stripe intake wrote it (src/orders/intake). */
export const storedAddress = z.object({
  name: z.string().optional(),
  phone: z.string().optional(),
  line1: z.string().min(1),
  line2: z.string().optional(),
  city: z.string().min(1),
  state: z.string().optional(),
  postalCode: z.string().min(1),
  country: z.string().length(2),
});

export function parseStoredAddress(value: unknown): ShippingAddress | null {
  const parsed = storedAddress.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Reads where an order goes, and whether it has anything to ship at all. */
/** Where an order goes, and whether all it holds is digital. */
// The lines' unit weights ride along in the same statement: they make the parcel.
export const destinationStatement = `SELECT o.shipping_address,
                COALESCE((SELECT bool_and(p.digital) FROM order_lines l JOIN products p ON p.sku = l.sku
                          WHERE l.order_id = o.id), false) AS digital_only,
                (SELECT json_object_agg(l.sku, p.weight_oz) FROM order_lines l JOIN products p ON p.sku = l.sku
                 WHERE l.order_id = o.id) AS weights
         FROM orders o WHERE o.id = $1::uuid`;

/** A row of destinationStatement (test/db/row-types.test.ts holds it to the schema). */
export interface DestinationRow {
  shipping_address: unknown;
  digital_only: boolean;
  weights: Record<string, number | null> | null;
}

/**
 * destinationStatement with the booking recorded for the order beside it (null: none yet): the
 * shipment step's one read before it books.
 */
export const destinationWithBookingStatement = `SELECT o.shipping_address,
                COALESCE((SELECT bool_and(p.digital) FROM order_lines l JOIN products p ON p.sku = l.sku
                          WHERE l.order_id = o.id), false) AS digital_only,
                (SELECT json_object_agg(l.sku, p.weight_oz) FROM order_lines l JOIN products p ON p.sku = l.sku
                 WHERE l.order_id = o.id) AS weights,
                (SELECT json_build_object('carrier', s.carrier, 'trackingNumber', s.tracking_number,
                                          'trackingUrl', s.tracking_url)
                 FROM shipments s WHERE s.order_id = o.id) AS booking
         FROM orders o WHERE o.id = $1::uuid`;

/** A row of destinationWithBookingStatement. */
export interface DestinationWithBookingRow extends DestinationRow {
  booking: { carrier: string; trackingNumber: string; trackingUrl: string } | null;
}

const destinationOf = (row: DestinationRow) => ({
  address: parseStoredAddress(row.shipping_address),
  digitalOnly: row.digital_only,
  weightsOz: row.weights ?? {},
});

export function createShippingDestinations(db: Database): ShippingDestinations {
  const sql = sqlPool(db);
  return {
    async find(orderId) {
      // One statement (Prisma's nested select takes three): asked on every order's shipment step.
      const { rows } = await sql.query<DestinationRow>(destinationStatement, [orderId]);
      const order = rows[0];
      return order ? destinationOf(order) : null;
    },
    async findWithBooking(orderId) {
      const { rows } = await sql.query<DestinationWithBookingRow>(destinationWithBookingStatement, [orderId]);
      const order = rows[0];
      return { destination: order ? destinationOf(order) : null, booking: order?.booking ?? null };
    },
  };
}
