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
// The lines' unit weights and ship-alone flags ride along in the same statement: they make the parcels.
export const destinationStatement = `SELECT o.shipping_address,
                COALESCE((SELECT bool_and(p.digital) FROM order_lines l JOIN products p ON p.sku = l.sku
                          WHERE l.order_id = o.id), false) AS digital_only,
                (SELECT json_object_agg(l.sku, p.weight_oz) FROM order_lines l JOIN products p ON p.sku = l.sku
                 WHERE l.order_id = o.id) AS weights,
                (SELECT json_object_agg(l.sku, p.ships_alone) FROM order_lines l JOIN products p ON p.sku = l.sku
                 WHERE l.order_id = o.id) AS ships_alone
         FROM orders o WHERE o.id = $1::uuid`;

/** A row of destinationStatement (test/db/row-types.test.ts holds it to the schema). */
export interface DestinationRow {
  shipping_address: unknown;
  digital_only: boolean;
  weights: Record<string, number | null> | null;
  ships_alone: Record<string, boolean> | null;
}

export function createShippingDestinations(db: Database): ShippingDestinations {
  const sql = sqlPool(db);
  return {
    async find(orderId) {
      // One statement (Prisma's nested select takes three): asked on every order's shipment step.
      const { rows } = await sql.query<DestinationRow>(destinationStatement, [orderId]);
      const order = rows[0];
      if (!order) return null;
      return {
        address: parseStoredAddress(order.shipping_address),
        digitalOnly: order.digital_only,
        weightsOz: order.weights ?? {},
        shipsAlone: order.ships_alone ?? {},
      };
    },
  };
}
