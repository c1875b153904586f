import express, { Router, type Request } from "express";
import { z } from "zod";
import { AppError } from "../errors";
import { shipmentDeliveredEvent, type ShipmentDeliveredEvent } from "../events/contracts";
import type { Logger } from "../logger";
import { carrierSignatureToleranceSeconds, verifyCarrierSignature } from "./carrier-signature";
import { easyPostLibrary, type EasyPost } from "./easypost-carrier";
import { isCarrierException, type CarrierExceptions } from "./carrier-exceptions";
import type { ShipmentRecord, ShipmentRepository } from "./shipment-repository";

/** A delivery time this far past our clock is not a delivery that happened (clock skew allowed). */
const futureToleranceMs = carrierSignatureToleranceSeconds * 1000;

const deliveryNotice = z.object({
  trackingNumber: z.string().min(1).max(100),
  status: z.literal("delivered"),
  deliveredAt: z.iso.datetime({ offset: true }).optional(),
});

/** An EasyPost webhook Event carrying a Tracker (tracker.created / tracker.updated). */
const easyPostEvent = z.object({
  id: z.string().min(1).max(100),
  object: z.literal("Event"),
  description: z.string().max(100),
  result: z
    .object({
      object: z.string().optional(),
      tracking_code: z.string().min(1).max(100).optional(),
      status: z.string().max(50).optional(),
      tracking_details: z
        .array(
          z.object({
            status: z.string().optional(),
            datetime: z.string().optional().nullable(),
            message: z.string().max(500).optional().nullable(),
          }),
        )
        .optional(),
    })
    .passthrough(),
});

/** EasyPost's tracker statuses (the development stand-in speaks the same list). */
export const easyPostTrackerStatuses = [
  "unknown",
  "pre_transit",
  "in_transit",
  "out_for_delivery",
  "delivered",
  "available_for_pickup",
  "return_to_sender",
  "failure",
  "cancelled",
  "error",
] as const;
const easyPostStatuses = new Set<string>(easyPostTrackerStatuses);
/** Statuses ops should hear about: the parcel will not arrive by itself. */
const troubleStatuses = new Set(["return_to_sender", "failure", "cancelled", "error"]);

export const carrierWebhookPath = "/api/carrier/webhook";

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new AppError("invalid_json", "Request body is not valid JSON");
  }
}

function validationFailed(message: string, error?: z.ZodError): AppError {
  return new AppError("validation_failed", message, {
    details: (error?.issues ?? []).map((issue) => ({ path: issue.path.join("."), message: issue.message })),
  });
}

/**
 * POST /api/carrier/webhook. Two signatures, over the exact bytes received (so this router reads
 * the body raw and must be mounted before any JSON parser):
 * - `X-Hmac-Signature`: EasyPost's tracker events, checked with the official library's
 *   `Utils.validateWebhook` against EASYPOST_WEBHOOK_SECRET;
 * - `X-Carrier-Signature`: the development sandbox carrier's `t=..,v1=..` format (with a
 *   timestamp, so a captured notice cannot be replayed), only when a sandbox secret is configured,
 *   which production refuses.
 * A bad or missing signature is 400 and changes nothing.
 *
 * A repeated delivery notice (the carrier retries, or our answer got lost) publishes the event
 * again with the delivery time first recorded; the event id makes Inngest drop the repeat, and a
 * crash between marking the row and publishing heals on the carrier's retry.
 */
export function carrierWebhookRouter(deps: {
  /** The development sandbox carrier's secret (CARRIER_WEBHOOK_SECRET); unset in production. */
  secret?: string;
  /** EASYPOST_WEBHOOK_SECRET. */
  easyPostSecret?: string;
  shipments: ShipmentRepository;
  publish: (event: ShipmentDeliveredEvent) => Promise<unknown>;
  /** Flags, alerts and e-mails for a parcel in trouble (src/shipping/carrier-exceptions.ts). */
  exceptions?: Pick<CarrierExceptions, "handle">;
  logger: Logger;
  now?: () => number;
}): Router {
  const { secret, easyPostSecret, shipments, publish } = deps;
  const now = deps.now ?? Date.now;
  const logger = deps.logger.child({ component: "carrier-webhook" });
  // Verification needs no API key: only the library's webhook helper is used (loaded on first use).
  let verifier: Promise<EasyPost> | undefined;
  const easyPost = () => {
    verifier ??= easyPostLibrary().then((Client) => new Client("", { useProxy: true }));
    return verifier;
  };
  const router = Router();

  const deliver = async (shipment: ShipmentRecord, deliveredAt: Date) => {
    const result = await shipments.markDelivered({ trackingNumber: shipment.trackingNumber }, deliveredAt);
    if (result.outcome === "not-found") return null;
    const recorded = result.shipment;
    const recordedAt = (recorded.deliveredAt ?? deliveredAt).toISOString();
    await publish(
      shipmentDeliveredEvent({
        orderId: recorded.orderId,
        trackingNumber: recorded.trackingNumber,
        deliveredAt: recordedAt,
      }),
    );
    const repeat = result.outcome === "already-delivered";
    logger.info(
      { orderId: recorded.orderId, trackingNumber: recorded.trackingNumber, repeat },
      "shipment delivered",
    );
    return { orderId: recorded.orderId, deliveredAt: recordedAt, repeat };
  };

  const handleEasyPost = async (raw: Buffer, req: Request) => {
    let verified: unknown;
    const client = await easyPost();
    try {
      if (!easyPostSecret) throw new Error("EASYPOST_WEBHOOK_SECRET is not configured");
      verified = client.Utils.validateWebhook(
        raw,
        { "X-Hmac-Signature": req.get("x-hmac-signature") },
        easyPostSecret,
      );
    } catch {
      logger.warn("EasyPost webhook with an invalid signature");
      throw new AppError("invalid_signature", "X-Hmac-Signature does not match the request body");
    }
    const parsed = easyPostEvent.safeParse(verified);
    if (!parsed.success) throw validationFailed("Not an EasyPost event", parsed.error);
    const event = parsed.data;
    const tracker = event.result;
    if (!event.description.startsWith("tracker.") || !tracker.tracking_code || !tracker.status) {
      return { received: true, ignored: `event ${event.description} is not handled` };
    }
    if (!easyPostStatuses.has(tracker.status)) {
      return { received: true, ignored: `tracker status ${tracker.status} is not known` };
    }
    const shipment = await shipments.findByTrackingNumber(tracker.tracking_code);
    if (!shipment) {
      // Answering an error would make EasyPost retry something that will never be ours.
      logger.warn(
        { eventId: event.id, trackingNumber: tracker.tracking_code },
        "tracker event for no shipment of ours",
      );
      return { received: true, ignored: "unknown tracking number" };
    }
    if (tracker.status !== "delivered") {
      // A late in_transit after delivered must not move the record backwards.
      if (shipment.status !== "delivered")
        await shipments.recordTrackerStatus(shipment.trackingNumber, tracker.status);
      // Acted on when the status changes: EasyPost repeats events, and each is one alert at most.
      if (
        deps.exceptions &&
        shipment.status !== "delivered" &&
        shipment.trackerStatus !== tracker.status &&
        isCarrierException(tracker.status)
      ) {
        const detail = [...(tracker.tracking_details ?? [])]
          .reverse()
          .find((entry) => entry.status === tracker.status);
        await deps.exceptions.handle(shipment, tracker.status, detail?.message ?? undefined);
      }
      const log = {
        orderId: shipment.orderId,
        trackingNumber: shipment.trackingNumber,
        status: tracker.status,
      };
      if (troubleStatuses.has(tracker.status)) logger.warn(log, "parcel in trouble: ops should look at it");
      else logger.info(log, "tracker updated");
      return { received: true, orderId: shipment.orderId, status: tracker.status };
    }
    const scan = [...(tracker.tracking_details ?? [])]
      .reverse()
      .find((detail) => detail.status === "delivered");
    const scanned = scan?.datetime ? Date.parse(scan.datetime) : Number.NaN;
    // The carrier's scan time, unless missing or ahead of our clock: then the time of receipt.
    const deliveredAt = new Date(
      Number.isFinite(scanned) && scanned <= now() + futureToleranceMs ? scanned : now(),
    );
    const delivered = await deliver(shipment, deliveredAt);
    if (!delivered) return { received: true, ignored: "unknown tracking number" };
    return { received: true, trackingNumber: shipment.trackingNumber, status: "delivered", ...delivered };
  };

  const handleSandbox = async (raw: Buffer, req: Request) => {
    if (!secret || !verifyCarrierSignature(raw, req.get("x-carrier-signature"), secret, { nowMs: now() })) {
      logger.warn("carrier webhook with a missing, stale or invalid signature");
      throw new AppError("invalid_signature", "X-Carrier-Signature does not match the request body");
    }
    const parsed = deliveryNotice.safeParse(parseJson(raw));
    if (!parsed.success) throw validationFailed("Not a delivery notice", parsed.error);
    const { trackingNumber } = parsed.data;
    const deliveredAt = parsed.data.deliveredAt ? new Date(parsed.data.deliveredAt) : new Date(now());
    if (deliveredAt.getTime() > now() + futureToleranceMs) {
      throw new AppError("validation_failed", "deliveredAt is in the future", {
        details: [{ path: "deliveredAt", message: "must not be later than now" }],
      });
    }
    const shipment = await shipments.findByTrackingNumber(trackingNumber);
    const delivered = shipment ? await deliver(shipment, deliveredAt) : null;
    if (!delivered) throw new AppError("not_found", `No shipment with tracking number ${trackingNumber}`);
    return {
      received: true,
      orderId: delivered.orderId,
      trackingNumber,
      deliveredAt: delivered.deliveredAt,
      repeat: delivered.repeat,
    };
  };

  router.post(
    carrierWebhookPath,
    express.raw({ type: () => true, limit: "64kb" }),
    async (req: Request, res) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const body =
        req.get("x-hmac-signature") !== undefined
          ? await handleEasyPost(raw, req)
          : await handleSandbox(raw, req);
      res.json(body);
    },
  );
  return router;
}
