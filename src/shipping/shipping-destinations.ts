import { z } from "zod";
import type { Database } from "../db/client";
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
export function createShippingDestinations(db: Database): ShippingDestinations {
  return {
    async find(orderId) {
      const order = await db.order.findUnique({
        where: { id: orderId },
        select: { shippingAddress: true, lines: { select: { product: { select: { digital: true } } } } },
      });
      if (!order) return null;
      return {
        address: parseStoredAddress(order.shippingAddress),
        digitalOnly: order.lines.length > 0 && order.lines.every((line) => line.product.digital),
      };
    },
  };
}
