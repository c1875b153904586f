import type Stripe from "stripe";
import type { Alerter } from "../alerts";
import type { Config } from "../config";
import type { Database } from "../db/client";
import type { EventPublisher } from "../events/publisher";
import type { Logger } from "../logger";
import type { EmailSender } from "../notifications/email-sender";
import type { Refunds } from "../orders/refund-order";
import { createExchangeCheckouts } from "../payments/exchange-checkout";
import type { PaymentGateway } from "../payments/payment-gateway";
import { durationMs } from "../shared/duration";
import { lazyEasyPostClient, warehouseAddress } from "../shipping";
import { createPrismaCarrierShipmentIds } from "../shipping/carrier-shipment-ids";
import { createEasyPostReturnLabels } from "../shipping/return-labels";
import type { Timeline } from "../timeline/timeline";
import { returnAdminRoutes } from "./admin-routes";
import { createExchangePaymentEvents } from "./exchange-payment-events";
import { parseRestockingFee } from "./return-policy";
import { createReturnRecords } from "./return-records";
import { createReturnTracking } from "./return-tracking";
import { createReturnRunWork, type ReturnWorkDeps } from "./return-work";
import { createReturnActions } from "./returns";
import { createStalledReturns } from "./stalled-returns";

/** What the returns take from the rest of the service. */
export interface ReturnsShared {
  config: Config;
  db: Database;
  stripe: Stripe;
  publisher: EventPublisher;
  timeline: Timeline;
  refunds: Pick<Refunds, "refund">;
  payments: Pick<PaymentGateway, "chargeOffSession" | "refundInFull">;
  sender: EmailSender;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
  links: { order(orderId: string): string; track(trackingNumber: string): string };
  adminToken: string;
  /** EasyPost (or its stand-in): without it, returns are asked for but no run buys their labels. */
  easyPost?: { apiKey: string; apiBase?: string };
}

/**
 * Returns after delivery, composed in one place (src/returns): the use cases both doors and the
 * carrier's tracker share, what process-return's steps do and its sweep, the returns' side of the
 * Stripe webhook (an exchange's difference paid on Checkout), and the admin routes.
 */
export function createReturnsModule(shared: ReturnsShared) {
  const { config, db, publisher, timeline } = shared;
  const records = createReturnRecords(db);
  const actions = createReturnActions({
    records,
    publisher,
    timeline,
    windowMs: durationMs(config.RETURN_WINDOW),
    approval: config.RETURN_APPROVAL,
    listForOrder: (orderId) => records.listForOrder(orderId),
  });
  // What process-return's steps work with; the steps' work itself is in src/inngest/steps.
  const workDeps: ReturnWorkDeps | undefined = shared.easyPost
    ? {
        db,
        records,
        labels: createEasyPostReturnLabels({
          client: lazyEasyPostClient(shared.easyPost),
          warehouse: warehouseAddress(config),
          serviceLevels: config.SHIPPING_SERVICE_LEVEL.split(","),
          itemWeightOz: config.SHIPPING_ITEM_WEIGHT_OZ,
          // Decision 0185: the shipment each return label is bought on, recorded before the buy.
          shipmentIds: createPrismaCarrierShipmentIds(db),
        }),
        refunds: shared.refunds,
        payments: shared.payments,
        sender: shared.sender,
        timeline,
        alerts: shared.alerts,
        fee: parseRestockingFee(config.RETURN_RESTOCKING_FEE),
        checkouts: {
          sessions: createExchangeCheckouts(shared.stripe),
          windowMs: durationMs(config.EXCHANGE_PAYMENT_WINDOW),
        },
        orderUrl: (orderId) => shared.links.order(orderId),
        trackUrl: (trackingNumber) => shared.links.track(trackingNumber),
      }
    : undefined;
  return {
    records,
    actions,
    /** The Stripe webhook's exchange payments (none without a carrier: no exchange ships). */
    exchangePayments: workDeps
      ? createExchangePaymentEvents({ work: createReturnRunWork(workDeps), publisher, logger: shared.logger })
      : undefined,
    /** process-return's, cleanup-cancelled-return's and recover-stalled-returns' dependencies. */
    workflow: workDeps
      ? {
          workDeps,
          stalled: createStalledReturns(db),
          waitSlice: "1d",
          waitSlices: Math.max(1, Math.ceil(durationMs(config.RETURN_SHIP_WITHIN) / 86_400_000)),
          // EXCHANGE_PAYMENT_WINDOW is at most 23h: one slice.
          paymentSlice: config.EXCHANGE_PAYMENT_WINDOW,
          paymentSlices: 1,
          exchangeShips: config.EXCHANGE_SHIPS,
        }
      : undefined,
    tracking: createReturnTracking({ records, actions, timeline }),
    admin: returnAdminRoutes({
      adminToken: shared.adminToken,
      returns: actions,
      orderExists: (orderId) => records.orderExists(orderId),
    }),
  };
}

export type ReturnsModule = ReturnType<typeof createReturnsModule>;
