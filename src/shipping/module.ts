import type { Alerter } from "../alerts";
import type { Config } from "../config";
import type { Database } from "../db/client";
import type { EventPublisher } from "../events/publisher";
import type { Timeline } from "../timeline/timeline";
import { createCarrierExceptions } from "./carrier-exceptions";
import { createPrismaCarrierShipmentIds } from "./carrier-shipment-ids";
import { carrierWebhookRouter } from "./carrier-webhook";
import { createLiveRates, createShippingProvider } from "./create-shipping-provider";
import { createLabelVoids } from "./label-void";
import { createParcelTracking } from "./parcel-tracking";
import { createShipmentRepository } from "./prisma-shipment-repository";
import { createShipmentBooking } from "./shipment-booking";
import { createShippingDestinations } from "./shipping-destinations";

type CarrierWebhookDeps = Parameters<typeof carrierWebhookRouter>[0];

/**
 * Shipping, composed in its own folder: the carrier (EasyPost, or its stand-in), the shipment
 * records and destinations, the booking the workflow uses, the label voids, the parcel tracking the
 * customer's page reads, and the carrier's webhook.
 */
export function createShippingModule(shared: {
  config: Config;
  db: Database;
  /** EasyPost, or its stand-in (createShippingProvider refuses to wire without it). */
  easyPost: { apiKey: string; apiBase?: string } | undefined;
  timeline: Timeline;
  alerts: Pick<Alerter, "notify">;
  publisher: EventPublisher;
  /** Puts the order on the console's "needs attention" list. */
  flagForOps: (orderId: string, reason: string) => Promise<void>;
}) {
  const { config, db, timeline, alerts, flagForOps } = shared;
  const shipments = createShipmentRepository(db);
  const destinations = createShippingDestinations(db);
  const provider = createShippingProvider(config, shared.easyPost, createPrismaCarrierShipmentIds(db));
  return {
    shipments,
    destinations,
    provider,
    /** CHECKOUT_LIVE_RATES: EasyPost's rates at checkout and the shop's policy; undefined when off. */
    liveRates: createLiveRates(config, shared.easyPost),
    booking: createShipmentBooking({
      provider,
      shipments,
      destinations,
      limits: {
        itemWeightOz: config.SHIPPING_ITEM_WEIGHT_OZ,
        maxWeightOz: config.SHIPPING_MAX_PARCEL_WEIGHT_OZ,
      },
    }),
    labels: createLabelVoids({
      provider,
      shipments,
      timeline,
      alerts,
      publisher: shared.publisher,
      flagForOps,
    }),
    tracking: createParcelTracking(db),
    /** POST /api/carrier/webhook, given what the orders and the returns do with a tracker's news. */
    carrierWebhook(doors: {
      easyPostSecret: string | undefined;
      logger: CarrierWebhookDeps["logger"];
      markOrderDelivered: NonNullable<CarrierWebhookDeps["markOrderDelivered"]>;
      tellCustomer: Parameters<typeof createCarrierExceptions>[0]["tellCustomer"];
      returnParcels: CarrierWebhookDeps["returnParcels"];
    }) {
      return carrierWebhookRouter({
        easyPostSecret: doors.easyPostSecret,
        shipments,
        logger: doors.logger,
        publish: (event) => shared.publisher.publish(event),
        // Decision 0195: the order's delivery mark, done here rather than by a step of the run.
        markOrderDelivered: doors.markOrderDelivered,
        timeline,
        exceptions: createCarrierExceptions({
          flagForOps,
          timeline,
          alerts,
          tellCustomer: doors.tellCustomer,
        }),
        ...(doors.returnParcels ? { returnParcels: doors.returnParcels } : {}),
      });
    },
  };
}

export type ShippingModule = ReturnType<typeof createShippingModule>;
