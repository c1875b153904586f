import { z } from "zod";
import type { Database } from "../db/client";
import { AppError } from "../errors";
import type { AddressVerdict, ShippingAddress } from "../shipping/shipping-provider";
import type { Timeline } from "../timeline/timeline";
import type { Holds } from "./hold-order";
import { decide } from "../shared/order-model";
import { loadOrderFacts, refusal } from "./model-check";

/** The address form the customer fills in (the shape Stripe Checkout collects). */
export const addressForm = z.object({
  name: z.string().trim().max(200).optional(),
  line1: z.string().trim().min(1, "the street is required").max(200),
  line2: z.string().trim().max(200).optional(),
  city: z.string().trim().min(1, "the city is required").max(100),
  state: z.string().trim().max(100).optional(),
  postalCode: z.string().trim().min(1, "the postal code is required").max(20),
  country: z
    .string()
    .trim()
    .regex(/^[A-Za-z]{2}$/, "the country is a two-letter code")
    .transform((value) => value.toUpperCase()),
});

/** What the customer's correction page shows: the hold's reason in the carrier's words, and the address. */
export interface PendingCorrection {
  carrierMessage: string;
  address: ShippingAddress | null;
}

/**
 * The customer's side of the address check: an order held because the carrier cannot deliver to
 * its address is corrected through a signed link; a corrected address the carrier accepts is stored
 * and the hold released, so the run goes on to buy the label (with the new address: the booking
 * reads it from the order).
 */
export function createAddressCorrections(deps: {
  db: Database;
  holds: Holds;
  timeline: Pick<Timeline, "record">;
  /** The carrier's verification; null when the carrier has none (then any address is taken). */
  verify: (address: ShippingAddress) => Promise<AddressVerdict | null>;
}) {
  const { db, holds, timeline, verify } = deps;
  return {
    /** Null when the order is not held for its address (nothing to correct). */
    async pending(orderId: string): Promise<PendingCorrection | null> {
      const hold = await holds.current(orderId);
      if (hold?.reason !== "address") return null;
      const order = await db.order.findUnique({ where: { id: orderId }, select: { shippingAddress: true } });
      return {
        carrierMessage: hold.note ?? "The carrier could not confirm the address.",
        address: (order?.shippingAddress as ShippingAddress | null) ?? null,
      };
    },

    async correct(orderId: string, input: unknown) {
      // The order model first (decision 0170); the release below is conditional on the address hold.
      const facts = await loadOrderFacts(db, orderId);
      if (!facts) throw new AppError("order_not_held", `Order ${orderId} has no address to correct`);
      const allowed = decide("correct-address", facts);
      if (!allowed.allowed) throw refusal(orderId, "correct-address", allowed);
      const parsed = addressForm.safeParse(input);
      if (!parsed.success) {
        throw new AppError("validation_failed", parsed.error.issues.map((issue) => issue.message).join("; "));
      }
      const address: ShippingAddress = Object.fromEntries(
        Object.entries(parsed.data).filter(([, value]) => value !== undefined && value !== ""),
      ) as unknown as ShippingAddress;
      const verdict = await verify(address);
      if (verdict && !verdict.deliverable) {
        throw new AppError(
          "validation_failed",
          `The carrier cannot deliver there either: ${verdict.message}`,
        );
      }
      await db.order.update({ where: { id: orderId }, data: { shippingAddress: { ...address } } });
      await timeline.record(orderId, "address-corrected", { country: address.country, by: "customer" });
      await holds.releaseHold(orderId, { by: "customer", onlyReason: "address" });
      return { orderId, status: "released" as const };
    },
  };
}

export type AddressCorrections = ReturnType<typeof createAddressCorrections>;
