import type { AlertOutbox, Alerter } from "../alerts";
import type { FulfilmentRecords, ParcelBooking } from "../orders/fulfilment-records";
import type { AddressVerdict, VoidOutcome } from "../shipping/shipping-provider";
import type { LabelVoids } from "../shipping/label-void";
import type { Holds } from "../orders/hold-order";
import type { DisputeHold } from "../orders/disputed-amount";
import type { InventoryRepository } from "../inventory/inventory";
import type { LowStockWatch } from "../inventory/low-stock";
import type { StockLedger } from "../inventory/stock-ledger";
import type { CustomerMessages, ShipmentNotice } from "../notifications/customer-messages";
import type { EmailOutbox } from "../notifications/email-sender";
import type { OrderRepository } from "../orders/order-repository";
import type { OrderRedrive } from "../orders/redrive-order";
import type { Timeline } from "../timeline/timeline";
import type { PaymentGateway } from "../payments/payment-gateway";
import type { PaymentRepository } from "../payments/payment-repository";
import type { CheckoutSweep } from "../orders/checkout/checkout-sweep";
import type { StripeIntake } from "../orders/intake/stripe-intake";
import type { Reconciliation } from "../reconciliation/reconcile";
import type { ReturnWork } from "../returns/return-work";
import type { StalledReturns } from "../returns/stalled-returns";
import type { WebhookDelivery } from "../webhooks/delivery";
import type {
  ExpiringAuthorizations,
  RecoveryCheckpoints,
  StalledOrders,
  StripeEventSource,
} from "../recovery";

/**
 * Books an order's parcels once; repeating it returns the same bookings. Null: every product of
 * the order is digital, there is nothing to ship.
 */
export interface ShipmentBooking {
  /** Books and records every parcel; null when every product of the order is digital. */
  book(order: {
    orderId: string;
    lines: { sku: string; quantity: number }[];
  }): Promise<ParcelBooking[] | null>;
  /** Books every parcel with the carrier (or returns the recorded ones) without recording new ones. */
  bookWithCarrier(order: {
    orderId: string;
    lines: { sku: string; quantity: number }[];
  }): Promise<ParcelBooking[] | null>;
  voidWithCarrier(orderId: string, booking: ShipmentNotice): Promise<VoidOutcome>;
  /** The carrier's verdict on the order's address (null: nothing to check). */
  verifyDestination(orderId: string): Promise<AddressVerdict | null>;
  /**
   * verifyDestination, and the order's hold read in the same statement (`hold` absent: not read,
   * ask the holds): the address check answers the first look at the hold with it.
   */
  verifyDestinationWithHold(
    orderId: string,
  ): Promise<{ verdict: AddressVerdict | null; hold?: { reason: string; holdId: string } | null }>;
  /** The order's current parcels, parcel 1 first (empty: nothing booked). */
  findByOrder(
    orderId: string,
  ): Promise<(ParcelBooking & { status: "booked" | "delivered"; deliveredAt?: Date | null })[]>;
}

export interface WorkflowSettings {
  cancelWindow: string;
  /** How often a submitted label refund is asked about (LABEL_REFUND_CHECK_EVERY). */
  labelRefundCheckEvery: string;
  /** How many looks cover the carrier's 30 days (at least one). */
  labelRefundChecks: number;
  /** FULFILMENT_HOLD: the wait between payment and buying the label ("0s": none). */
  fulfilmentHold: string;
  reviewDelay: string;
  reviewAfterDelivery: string;
  /**
   * PARTIAL_FULFILMENT: some lines found no stock. `cancel_order`: the whole order is cancelled;
   * `ship_available`: the lines reserved ship and only they are charged. Optional, so a caller
   * built before the setting existed keeps today's behaviour.
   */
  partialFulfilment?: "cancel_order" | "ship_available";
  /** ALERT_GROUP_WINDOW: deliver-alert-group's debounce ("2m" when not given). */
  alertGroupWindow?: string;
}

/** What the recovery crons read and feed: see src/inngest/functions/recover-*, sweep-*, alert-*. */
export interface RecoveryDependencies {
  stalledOrders: StalledOrders;
  expiringAuthorizations: ExpiringAuthorizations;
  checkpoints: RecoveryCheckpoints;
  stripeEvents: StripeEventSource;
  /** The webhook's own intake: a swept event is handled exactly as a delivered one. */
  intake: Pick<StripeIntake, "handle">;
  /** The admin API's re-drive, used by the stalled-orders cron. */
  redrive: OrderRedrive;
  /** Half-made checkouts and stale stock holds: see sweep-stale-checkouts. */
  checkouts: CheckoutSweep;
  /** The daily reconciliation against Stripe and the carrier: see reconcile-daily. */
  reconciliation: Pick<Reconciliation, "run" | "list" | "timeZone">;
}

/** Everything the Inngest functions touch, built in src/wiring.ts. */
export interface WorkflowDependencies {
  orders: OrderRepository;
  /** The guarded writes of fulfilment: each lands only while its run owns an uncancelled order. */
  fulfilment: FulfilmentRecords;
  timeline: Timeline;
  inventory: InventoryRepository;
  payments: PaymentGateway;
  paymentRecords: PaymentRepository;
  /** What open or lost chargebacks hold of an order's charge: no refund is asked against it. */
  disputes: { holdOf(orderId: string): Promise<DisputeHold> };
  shipments: ShipmentBooking;
  /** Bought labels handed back to the carrier (a cancel or a full refund after booking). */
  labels: LabelVoids;
  /** Fulfilment holds (src/orders/hold-order.ts): no label is bought while an order is held. */
  holds: Holds;
  messages: CustomerMessages;
  /** E-mails an SMTP outage left unsent; drained by src/inngest/functions/drain-email-outbox.ts. */
  emailOutbox: EmailOutbox;
  alerts: Alerter;
  /** Alerts kept until Slack took them; drained by src/inngest/functions/deliver-ops-alerts.ts. */
  alertOutbox: Pick<AlertOutbox, "drain" | "deliverGroup">;
  /** Products at or below their low-stock threshold: see watch-low-stock. */
  lowStock?: LowStockWatch;
  /** The stock ledger's daily check: see check-stock-ledger. */
  stockLedger?: Pick<StockLedger, "mismatches">;
  settings: WorkflowSettings;
  recovery: RecoveryDependencies;
  /** Returns after delivery: what process-return's steps do (their step files; src/inngest/steps/return-work.ts). */
  returns?: ReturnWorkflowDependencies;
  /** Signed outbound webhooks: what deliver-webhook's attempts do (src/webhooks/delivery.ts). */
  webhooks?: WebhookWorkflowDependencies;
}

export interface WebhookWorkflowDependencies {
  delivery: Pick<WebhookDelivery, "attempt">;
  /** WEBHOOK_RETRY_SCHEDULE: the delays before each retry (one attempt more than delays). */
  retrySchedule: string[];
}

export interface ReturnWorkflowDependencies {
  work: ReturnWork;
  /** The returns whose event was lost, for recover-stalled-returns; and the run's "started" mark. */
  stalled?: StalledReturns;
  /** How long each wait for an approval or the parcel lasts before the return is read again. */
  waitSlice: string;
  /** How many slices cover RETURN_SHIP_WITHIN (at least one). */
  waitSlices: number;
  /** How long each wait for a Checkout payment of the difference lasts before the return is read again. */
  paymentSlice: string;
  /** How many slices cover EXCHANGE_PAYMENT_WINDOW (at least one). */
  paymentSlices: number;
  /** EXCHANGE_SHIPS: the new item ships once the return is back, or at once. */
  exchangeShips: "on_receipt" | "at_once";
}
