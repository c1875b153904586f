import { z } from "zod";
import { sqlPool, type Database } from "../db/client";
import { holdIdOf } from "../shared/hold-id";
import type { ShippingDestinations } from "./shipment-booking";
import { asLines } from "./prisma-shipment-repository";
import type { ChosenService, ShippingAddress } from "./shipping-provider";
import type { ChosenShipping } from "../payments/money-breakdown";

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
                 WHERE l.order_id = o.id) AS ships_alone,
                o.money_breakdown -> 'shippingRate' AS shipping_rate
         FROM orders o WHERE o.id = $1::uuid`;

/**
 * The address check's one read: the destination and the order's hold (its reason and since when),
 * so the check answers the workflow's first look at the hold without a statement of its own.
 */
export const verificationStatement = `SELECT d.*, o.hold_reason, o.held_at
         FROM (${destinationStatement}) d, orders o WHERE o.id = $1::uuid`;

/** A row of verificationStatement. */
export interface VerificationRow extends DestinationRow {
  hold_reason: string | null;
  held_at: Date | null;
}

/** A row of destinationStatement (test/db/row-types.test.ts holds it to the schema). */
export interface DestinationRow {
  shipping_address: unknown;
  digital_only: boolean;
  weights: Record<string, number | null> | null;
  ships_alone: Record<string, boolean> | null;
  /** The shipping option the customer paid for (MoneyBreakdown.shippingRate), when recorded. */
  shipping_rate: ChosenShipping | null;
}

/**
 * The shipment step's one read: the destination and the order's current parcels (each parcel by
 * its latest label; none before the first booking), so a retried step finds what an earlier
 * attempt recorded without a statement of its own.
 */
export const bookingStatement = `SELECT d.*,
                (SELECT json_agg(json_build_object('carrier', s.carrier, 'trackingNumber', s.tracking_number,
                                                   'trackingUrl', s.tracking_url, 'parcelNumber', s.parcel_number,
                                                   'lines', s.lines)
                                 ORDER BY s.parcel_number, s.generation)
                 FROM shipments s WHERE s.order_id = $1::uuid AND s.superseded_at IS NULL) AS parcels
         FROM (${destinationStatement}) d`;

/** A row of bookingStatement. */
export interface BookingRow extends DestinationRow {
  parcels:
    | { carrier: string; trackingNumber: string; trackingUrl: string; parcelNumber: number; lines: unknown }[]
    | null;
}

function toDestination(order: DestinationRow) {
  return {
    address: parseStoredAddress(order.shipping_address),
    digitalOnly: order.digital_only,
    weightsOz: order.weights ?? {},
    shipsAlone: order.ships_alone ?? {},
    chosen: chosenServiceOf(order.shipping_rate),
  };
}

/** The chosen rate's metadata as the carrier is asked for it (carrier, service, the table's rate id). */
function chosenServiceOf(rate: ChosenShipping | null): ChosenService | null {
  if (!rate) return null;
  return {
    ...(rate.metadata.carrier ? { carrier: rate.metadata.carrier } : {}),
    ...(rate.metadata.service ? { service: rate.metadata.service } : {}),
    ...(rate.metadata.rateId ? { rateId: rate.metadata.rateId } : {}),
    displayName: rate.displayName,
    quotedAmount: rate.amountSubtotal,
  };
}

export function createShippingDestinations(db: Database): ShippingDestinations {
  const sql = sqlPool(db);
  return {
    async find(orderId) {
      // One statement (Prisma's nested select takes three): asked on every order's shipment step.
      const { rows } = await sql.query<DestinationRow>(destinationStatement, [orderId]);
      const order = rows[0];
      return order ? toDestination(order) : null;
    },

    async findForVerification(orderId) {
      const { rows } = await sql.query<VerificationRow>(verificationStatement, [orderId]);
      const order = rows[0];
      if (!order) return null;
      return {
        destination: toDestination(order),
        hold:
          order.hold_reason && order.held_at
            ? { reason: order.hold_reason, holdId: holdIdOf(order.held_at) }
            : null,
      };
    },

    async findForBooking(orderId) {
      const { rows } = await sql.query<BookingRow>(bookingStatement, [orderId]);
      const order = rows[0];
      if (!order) return null;
      return {
        destination: toDestination(order),
        parcels: (order.parcels ?? []).map(({ lines, ...parcel }) => ({ ...parcel, lines: asLines(lines) })),
      };
    },
  };
}
