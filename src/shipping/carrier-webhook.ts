import express, { Router, type Request } from "express";
import { z } from "zod";
import { AppError } from "../errors";
import type { Logger } from "../logger";
import { verifyCarrierSignature } from "./carrier-signature";
import type { ShipmentRepository } from "./shipment-repository";

export type ShipmentDeliveredEvent = {
  /** Inngest drops a second event with this id (24 hours), so a repeated webhook wakes no one twice. */
  id: string;
  name: "shop/shipment.delivered";
  data: { orderId: string; trackingNumber: string; deliveredAt: string };
};

export const shipmentDeliveredEventId = (orderId: string): string => `shipment-delivered-${orderId}`;

const deliveryNotice = z.object({
  trackingNumber: z.string().min(1).max(100),
  status: z.literal("delivered"),
  deliveredAt: z.iso.datetime({ offset: true }).optional(),
});

export const carrierWebhookPath = "/api/carrier/webhook";

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new AppError("invalid_json", "Request body is not valid JSON");
  }
}

/**
 * POST /api/carrier/webhook. The signature covers the exact bytes received, so this router reads
 * the body raw and must be mounted before any JSON parser.
 *
 * A repeated delivery notice (the carrier retries, or our answer got lost) publishes the event
 * again with the delivery time first recorded; the event id makes Inngest drop the repeat, and a
 * crash between marking the row and publishing heals on the carrier's retry.
 */
export function carrierWebhookRouter(deps: {
  secret: string;
  shipments: ShipmentRepository;
  publish: (event: ShipmentDeliveredEvent) => Promise<unknown>;
  logger: Logger;
}): Router {
  const { secret, shipments, publish } = deps;
  const logger = deps.logger.child({ component: "carrier-webhook" });
  const router = Router();

  router.post(
    carrierWebhookPath,
    express.raw({ type: () => true, limit: "16kb" }),
    async (req: Request, res) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (!verifyCarrierSignature(raw, req.get("x-carrier-signature"), secret)) {
        logger.warn("carrier webhook with a missing or invalid signature");
        throw new AppError("invalid_signature", "X-Carrier-Signature does not match the request body");
      }

      const parsed = deliveryNotice.safeParse(parseJson(raw));
      if (!parsed.success) {
        throw new AppError("validation_failed", "Not a delivery notice", {
          details: parsed.error.issues.map((issue) => ({
            path: issue.path.join("."),
            message: issue.message,
          })),
        });
      }
      const { trackingNumber } = parsed.data;
      const deliveredAt = parsed.data.deliveredAt ? new Date(parsed.data.deliveredAt) : new Date();

      const result = await shipments.markDelivered({ trackingNumber }, deliveredAt);
      if (result.outcome === "not-found") {
        throw new AppError("not_found", `No shipment with tracking number ${trackingNumber}`);
      }
      const { shipment } = result;
      const recordedAt = (shipment.deliveredAt ?? deliveredAt).toISOString();
      await publish({
        id: shipmentDeliveredEventId(shipment.orderId),
        name: "shop/shipment.delivered",
        data: { orderId: shipment.orderId, trackingNumber, deliveredAt: recordedAt },
      });
      logger.info(
        { orderId: shipment.orderId, trackingNumber, repeat: result.outcome === "already-delivered" },
        "shipment delivered",
      );
      res.json({
        received: true,
        orderId: shipment.orderId,
        trackingNumber,
        deliveredAt: recordedAt,
        repeat: result.outcome === "already-delivered",
      });
    },
  );
  return router;
}
