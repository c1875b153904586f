import { z } from "zod";
import { returnConditions, returnReasons } from "./return-policy";

/** POST /api/orders/:id/returns (and the console's form): which lines, how many, and why. */
export const createReturnBody = z
  .object({
    lines: z
      .array(
        z
          .object({
            sku: z.string().min(1).max(100),
            quantity: z.number().int().positive().max(10_000),
            /**
             * Another product instead of the money (an exchange). Cheaper: the difference is
             * refunded; dearer: charged off-session on the card saved at checkout.
             */
            exchangeSku: z.string().min(1).max(100).optional(),
          })
          .strict(),
      )
      .min(1)
      .max(100)
      .refine(
        (lines) => new Set(lines.map((line) => line.sku)).size === lines.length,
        "each sku at most once",
      ),
    reason: z.enum(returnReasons),
    note: z.string().max(500).optional(),
  })
  .strict();

/** approve, reject, close: an optional note, kept with the decision. */
export const returnDecisionBody = z.object({ note: z.string().max(500).optional() }).strict();

/** receive: the goods' condition (resellable: restocked; damaged: written off) and a note. */
export const receiveReturnBody = z
  .object({ condition: z.enum(returnConditions).default("resellable"), note: z.string().max(500).optional() })
  .strict();

const when = z.iso.datetime().nullable();

/** A return as the API answers it (ReturnView). */
export const returnSchema = z.object({
  returnId: z.uuid(),
  orderId: z.uuid(),
  status: z.enum(["requested", "approved", "received", "closed", "rejected", "cancelled"]),
  reason: z.string(),
  note: z.string().nullable(),
  requestedBy: z.string(),
  lines: z.array(
    z.object({
      sku: z.string(),
      quantity: z.number().int(),
      unitPrice: z.number().int(),
      exchangeSku: z.string().nullable(),
      exchangeUnitPrice: z.number().int().nullable(),
    }),
  ),
  exchange: z
    .object({
      trackingNumber: z.string().nullable(),
      trackingUrl: z.string().nullable(),
      reservedAt: when,
      sentAt: when,
      trackerStatus: z.string().nullable(),
      deliveredAt: when,
      charge: z
        .object({
          amount: z.number().int().nullable(),
          status: z.enum(["charged", "failed", "refunded", "awaiting_payment", "unpaid"]),
          paymentIntentId: z.string().nullable(),
          error: z.string().nullable(),
          chargedAt: when,
        })
        .nullable(),
    })
    .nullable(),
  label: z
    .object({
      carrier: z.string().nullable(),
      trackingNumber: z.string(),
      trackingUrl: z.string().nullable(),
      labelUrl: z.string().nullable(),
      trackerStatus: z.string().nullable(),
      refundStatus: z.string().nullable(),
      sentAt: when,
    })
    .nullable(),
  condition: z.enum(returnConditions).nullable(),
  receivedAt: when,
  refundAmount: z.number().int().nullable(),
  refundedAt: when,
  restockedAt: when,
  writtenOffAt: when,
  closedAt: when,
});
export const returnListSchema = z.object({ returns: z.array(returnSchema) });
