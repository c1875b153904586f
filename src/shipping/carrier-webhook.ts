import express, { Router, type Request } from "express";
import { z } from "zod";
import { AppError } from "../errors";
import { shipmentDeliveredEvent, type ShipmentDeliveredEvent } from "../events/contracts";
import type { Logger } from "../logger";
import type { Timeline } from "../timeline/timeline";
import { easyPostLibrary, type EasyPost } from "./easypost-carrier";
import { isCarrierException, type CarrierExceptions } from "./carrier-exceptions";
import type { ShipmentRecord, ShipmentRepository } from "./shipment-repository";

/** A delivery time this far past our clock is not a delivery that happened (clock skew allowed). */
const futureToleranceMs = 5 * 60 * 1000;

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

function validationFailed(message: string, error?: z.ZodError): AppError {
  return new AppError("validation_failed", message, {
    details: (error?.issues ?? []).map((issue) => ({ path: issue.path.join("."), message: issue.message })),
  });
}

/**
 * POST /api/carrier/webhook: EasyPost's tracker events, signed with `X-Hmac-Signature` over the
 * exact bytes received (so this router reads the body raw and must be mounted before any JSON
 * parser), checked with the official library's `Utils.validateWebhook` against
 * EASYPOST_WEBHOOK_SECRET. A bad or missing signature is 400 and changes nothing.
 *
 * A repeated delivery notice (the carrier retries, or our answer got lost) publishes the event
 * again with the delivery time first recorded; the event id makes Inngest drop the repeat, and a
 * crash between marking the row and publishing heals on the carrier's retry.
 */
export function carrierWebhookRouter(deps: {
  /** EASYPOST_WEBHOOK_SECRET. */
  easyPostSecret?: string;
  shipments: ShipmentRepository;
  publish: (event: ShipmentDeliveredEvent) => Promise<unknown>;
  /** Flags, alerts and e-mails for a parcel in trouble (src/shipping/carrier-exceptions.ts). */
  exceptions?: Pick<CarrierExceptions, "handle">;
  /**
   * Moves the order from `shipped` to `delivered` (and records it, once), when its last parcel is
   * delivered: fulfill-order then needs no step of its own for it (the event says `orderMarked`).
   * Idempotent: a repeat finds the order moved and changes nothing.
   */
  markOrderDelivered?: (orderId: string, deliveredAt: string) => Promise<unknown>;
  /** Where a parcel delivered before the order's last one is told. */
  timeline?: Pick<Timeline, "record">;
  /**
   * Return labels' trackers (src/returns/return-tracking.ts): a tracking number that is no
   * outbound parcel's may be a return's; null when it is not either.
   */
  returnParcels?: {
    tracked(event: { trackingNumber: string; status: string }): Promise<object | null>;
  };
  logger: Logger;
  now?: () => number;
}): Router {
  const { easyPostSecret, shipments, publish } = deps;
  const now = deps.now ?? Date.now;
  const logger = deps.logger.child({ component: "carrier-webhook" });
  // Verification needs no API key: only the library's webhook helper is used (loaded on first use).
  let verifier: Promise<EasyPost> | undefined;
  const easyPost = () => {
    verifier ??= easyPostLibrary().then((Client) => new Client("", { useProxy: true }));
    return verifier;
  };
  const router = Router();

  /**
   * Marks one parcel delivered; publishes shop/shipment.delivered only once every current parcel
   * of the order is (a re-shipped parcel counts by its new label; a replaced label's delivery is
   * recorded and counts for nothing). Each webhook marks its row and then reads the order's
   * parcels, so of two last parcels delivered at once the later reader sees both; both may
   * publish, and the one event id wakes the run once.
   */
  const deliver = async (shipment: ShipmentRecord, deliveredAt: Date) => {
    const result = await shipments.markDelivered({ trackingNumber: shipment.trackingNumber }, deliveredAt);
    if (result.outcome === "not-found") return null;
    const recorded = result.shipment;
    const recordedAt = (recorded.deliveredAt ?? deliveredAt).toISOString();
    const repeat = result.outcome === "already-delivered";
    const order = await shipments.deliveryOf(recorded.orderId);
    const all = order.deliveredAt !== null && order.lastTrackingNumber !== null;
    if (all && order.deliveredAt && order.lastTrackingNumber) {
      // Marked before it is published: a crash between heals on the carrier's retry, which
      // marks nothing again and publishes the same event.
      const lastDeliveredAt = order.deliveredAt.toISOString();
      if (deps.markOrderDelivered) await deps.markOrderDelivered(recorded.orderId, lastDeliveredAt);
      await publish(
        shipmentDeliveredEvent({
          orderId: recorded.orderId,
          trackingNumber: order.lastTrackingNumber,
          deliveredAt: lastDeliveredAt,
          ...(deps.markOrderDelivered ? { orderMarked: true } : {}),
        }),
      );
    } else if (!repeat && deps.timeline) {
      await deps.timeline.record(recorded.orderId, "parcel-delivered", {
        parcelNumber: recorded.parcelNumber,
        trackingNumber: recorded.trackingNumber,
        deliveredAt: recordedAt,
        delivered: order.delivered,
        parcels: order.parcels,
        ...(recorded.supersededAt ? { superseded: true } : {}),
      });
    }
    logger.info(
      {
        orderId: recorded.orderId,
        trackingNumber: recorded.trackingNumber,
        repeat,
        parcelsDelivered: `${order.delivered}/${order.parcels}`,
      },
      all ? "shipment delivered" : "parcel delivered, others still on their way",
    );
    return { orderId: recorded.orderId, deliveredAt: recordedAt, repeat, orderDelivered: all };
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
      const returned = await deps.returnParcels?.tracked({
        trackingNumber: tracker.tracking_code,
        status: tracker.status,
      });
      if (returned) {
        logger.info({ eventId: event.id, status: tracker.status, ...returned }, "return tracker updated");
        return { received: true, return: returned };
      }
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
        // A label a re-ship replaced: its parcel is dealt with already.
        shipment.supersededAt === null &&
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

  router.post(
    carrierWebhookPath,
    express.raw({ type: () => true, limit: "64kb" }),
    async (req: Request, res) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      res.json(await handleEasyPost(raw, req));
    },
  );
  return router;
}
