import { randomUUID } from "node:crypto";
import type { Alerter, OpsNotice, RunFailure } from "../../../src/alerts";
import type {
  ShipmentBooking,
  WorkflowDependencies,
  WorkflowSettings,
} from "../../../src/inngest/dependencies";
import type {
  InventoryRepository,
  ReservationLine,
  ReserveOutcome,
  ShortLine,
} from "../../../src/inventory/inventory";
import type {
  CustomerMessages,
  EmailOutcome,
  PaymentSettlement,
  ShipmentNotice,
} from "../../../src/notifications/customer-messages";
import { emailKeys } from "../../../src/notifications/customer-messages";
import type { FenceOutcome, FulfilmentRecords, Guarded } from "../../../src/orders/fulfilment-records";
import type { DisputeHold } from "../../../src/orders/disputed-amount";
import { holdableStatuses, type Hold } from "../../../src/orders/hold-order";
import { labelWanted } from "../../../src/shared/order-model";
import type {
  ClaimOutcome,
  FulfilmentOrder,
  OrderRepository,
  OrderStatus,
} from "../../../src/orders/order-repository";
import { payableStatuses } from "../../../src/orders/order-repository";
import type { Timeline, TimelineEntry } from "../../../src/timeline/timeline";
import {
  PaymentRejectedError,
  type AuthorizationState,
  type PaymentGateway,
  type PaymentIntentView,
  type PaymentRejectionReason,
} from "../../../src/payments/payment-gateway";
import type { PaymentRecord, PaymentRepository } from "../../../src/payments/payment-repository";
import type { AddressVerdict, CarrierBooking, VoidOutcome } from "../../../src/shipping/shipping-provider";

/**
 * In-memory fakes of every port fulfill-order uses (`WorkflowDependencies`), sharing one state, for
 * the fast tier of workflow tests (test/workflow-fast) and mutation testing. Each follows its real
 * implementation's contract, not just its signature:
 * - the claim (src/orders/order-repository.ts): taken once, only from a payable or re-driven
 *   `fulfilling` order with no cancel requested; a retried claim finds its own;
 * - guarded writes (src/orders/fulfilment-records.ts, the inventory's guarded reserve): land only
 *   while the claim owns the order, it is `fulfilling` and no cancel was requested; a write that
 *   already landed answers as landed;
 * - idempotency by key: a capture, void or refund repeated with its key changes nothing more
 *   (Stripe), an e-mail key is sent once, a timeline entry with a run id is written once per
 *   (order, kind, run), a shipment booked once per order;
 * - Stripe's states: a capture of a canceled intent is rejected, a void of a captured one is
 *   `not-voidable`;
 * - short stock (PARTIAL_FULFILMENT=ship_available): with `allowShort` each line takes what is on
 *   hand, the short lines are kept with the reservation and a repeat reports them again;
 * - partial capture: `amountToCapture` captures that much (the rest of the hold is released), and
 *   the intent's `amountRefunded` counts captured money given back only, as the gateway reports it;
 * - stock held at checkout (src/inventory/holding-inventory.ts, the inventory the workflow is
 *   given): `reserve` converts the order's hold into its reservation, `release` gives back the
 *   reservation and any hold still held.
 * Failures are injected per call (`failNext`), the way the Stripe stand-in injects them.
 */

type Order = Omit<FulfilmentOrder, "hasShipment"> & { attentionReason: string | null };

interface Intent {
  id: string;
  state: AuthorizationState;
  cancellationReason: string | null;
  amount: number;
  amountCaptured: number;
  amountRefunded: number;
  currency: string;
}

interface Product {
  stock: number;
  digital: boolean;
}

type Call = { method: string; args: unknown[] };

/** Calls that can be made to fail: `<port>.<method>`. */
export type FailurePoint =
  | "payments.capture"
  | "payments.retrieve"
  | "payments.voidAuthorization"
  | "payments.refundInFull"
  | "payments.refundAmount"
  | "payments.chargeOffSession"
  | "shipments.bookWithCarrier"
  | "messages.shipped"
  | "inventory.reserve"
  | "orders.claim"
  | "holds.current";

const shippedStatuses: readonly OrderStatus[] = ["shipped", "delivered", "completed"];
const claimableStatuses: readonly OrderStatus[] = [...payableStatuses, "fulfilling"];
const awaitingPaymentStatuses: readonly OrderStatus[] = ["pending", "payment_processing"];

/** An order's lines by SKU, copied, as the repository's statements return them. */
const linesBySku = (order: Order) =>
  [...order.lines].sort((a, b) => a.sku.localeCompare(b.sku)).map((line) => ({ ...line }));

export const defaultSettings: WorkflowSettings = {
  cancelWindow: "30d",
  labelRefundCheckEvery: "1d",
  labelRefundChecks: 30,
  fulfilmentHold: "0s",
  reviewDelay: "14d",
  reviewAfterDelivery: "3d",
};

export class FakeWorkflowWorld {
  readonly orders = new Map<string, Order>();
  readonly products = new Map<string, Product>();
  readonly reservations = new Map<
    string,
    { lines: ReservationLine[]; status: "reserved" | "released"; short?: ShortLine[] }
  >();
  /** Stock taken at checkout (stock_holds), by order. */
  readonly holds = new Map<string, { lines: ReservationLine[]; status: "held" | "converted" | "released" }>();
  readonly intents = new Map<string, Intent>();
  readonly paymentRows = new Map<string, PaymentRecord & { currency: string }>();
  readonly shipmentRows = new Map<
    string,
    CarrierBooking & { status: "booked" | "delivered"; deliveredAt?: Date | null }
  >();
  /**
   * Parcels after the first, by order, as the shipments table holds an order sent in several
   * (the first is `shipmentRows`'s): only what a re-drive's `find-booking` reads.
   */
  readonly laterParcels = new Map<
    string,
    (ShipmentNotice & { parcelNumber: number; deliveredAt: Date | null })[]
  >();
  /** Every parcel each tracking e-mail was sent for, by order, as the step handed them over. */
  readonly trackingEmailParcels = new Map<string, ShipmentNotice[]>();
  /** The carrier's answer to the address check, by order (none: no check, as without EasyPost). */
  readonly addressVerdicts = new Map<string, AddressVerdict>();
  /** How many parcels the carrier books for an order (default one). */
  readonly parcelsPerOrder = new Map<string, number>();
  /** What the carrier booked, recorded or not (a carrier is idempotent per order). */
  readonly carrierBookings = new Map<string, CarrierBooking>();
  readonly voidedLabels: string[] = [];
  /** The lines each order's parcel was booked with (what its weight is made of). */
  readonly bookedLines = new Map<string, ReservationLine[]>();
  readonly timelineEntries: (TimelineEntry & { orderId: string })[] = [];
  /**
   * Entries the workflow wrote through the timeline port, each a statement of its own (those
   * written inside the statement that moves the order, as the claim's, are not here).
   */
  readonly timelineWrites: { orderId: string; kind: string }[] = [];
  readonly emails: { key: string; orderId: string; template: string; args: unknown[] }[] = [];
  /** Every status change the ports made, in order (what the metrics' transition listener hears). */
  readonly statusChanges: { orderId: string; status: OrderStatus }[] = [];
  readonly runFailures: RunFailure[] = [];
  readonly notices: OpsNotice[] = [];
  /** Every Stripe call with its idempotency key, in order. */
  readonly stripeCalls: Call[] = [];
  /** What voidWithCarrier answers. */
  carrierVoidOutcome: VoidOutcome = "voided";
  private readonly stripeKeys = new Map<string, unknown>();
  private readonly failures = new Map<FailurePoint, (Error | (() => void))[]>();
  private refundCounter = 0;

  /** Makes the next `times` calls to `point` throw `error`, or run `act` first (e.g. a cancel landing). */
  failNext(point: FailurePoint, error: Error | (() => void), times = 1): void {
    const queue = this.failures.get(point) ?? [];
    for (let i = 0; i < times; i++) queue.push(error);
    this.failures.set(point, queue);
  }

  private maybeFail(point: FailurePoint): void {
    const next = this.failures.get(point)?.shift();
    if (next === undefined) return;
    if (next instanceof Error) throw next;
    next();
  }

  addProduct(sku: string, stock: number, options: { digital?: boolean } = {}): void {
    this.products.set(sku, { stock, digital: options.digital ?? false });
  }

  private moveTo(order: Order, status: OrderStatus): void {
    order.status = status;
    this.statusChanges.push({ orderId: order.id, status });
  }

  statusesOf(orderId: string): OrderStatus[] {
    return this.statusChanges.filter((change) => change.orderId === orderId).map((change) => change.status);
  }

  private product(sku: string): Product {
    const product = this.products.get(sku);
    if (!product) throw new Error(`no product ${sku}`);
    return product;
  }

  stockOf(sku: string): number | undefined {
    return this.products.get(sku)?.stock;
  }

  /** A paid order (authorized card, uncaptured) as the intake leaves it. */
  addPaidOrder(options: {
    lines: { sku: string; quantity: number; unitPrice?: number }[];
    status?: OrderStatus;
    customerId?: string;
    paymentIntentId?: string | null;
    intentState?: AuthorizationState;
    /** Placed through checkout, which took the lines' stock as a hold (default: no hold). */
    held?: boolean;
  }): { orderId: string; paymentIntentId: string | null } {
    const orderId = randomUUID();
    const lines = options.lines.map(({ sku, quantity, unitPrice }) => ({
      sku,
      quantity,
      unitPrice: unitPrice ?? 2500,
      name: `Product ${sku}`,
    }));
    const total = lines.reduce((sum, line) => sum + line.unitPrice * line.quantity, 0);
    const paymentIntentId =
      options.paymentIntentId === undefined ? `pi_${orderId.slice(0, 8)}` : options.paymentIntentId;
    this.orders.set(orderId, {
      id: orderId,
      customerId: options.customerId ?? "cus_fake",
      email: "buyer@example.com",
      status: options.status ?? "authorized",
      currency: "eur",
      total,
      paymentIntentId,
      claimId: null,
      cancelRequestedAt: null,
      createdAt: new Date(),
      placedAt: new Date(),
      lines,
      attentionReason: null,
    });
    if (options.held) {
      const held = lines.map(({ sku, quantity }) => ({ sku, quantity }));
      for (const line of held) this.product(line.sku).stock -= line.quantity;
      this.holds.set(orderId, { lines: held, status: "held" });
    }
    if (paymentIntentId) {
      const state = options.intentState ?? "requires_capture";
      this.intents.set(paymentIntentId, {
        id: paymentIntentId,
        state,
        cancellationReason: null,
        amount: total,
        amountCaptured: state === "succeeded" ? total : 0,
        amountRefunded: 0,
        currency: "eur",
      });
    }
    return { orderId, paymentIntentId };
  }

  order(orderId: string): Order {
    const order = this.orders.get(orderId);
    if (!order) throw new Error(`no order ${orderId}`);
    return order;
  }

  intent(paymentIntentId: string): Intent {
    const intent = this.intents.get(paymentIntentId);
    if (!intent) throw new Error(`no PaymentIntent ${paymentIntentId}`);
    return intent;
  }

  /** What the admin API's cancel does (requestCancellation); the cleanup run is not modelled here. */
  requestCancel(orderId: string): void {
    this.order(orderId).cancelRequestedAt = new Date();
  }

  /** A re-drive handing the order to another run: its claim changes. */
  redriveTo(orderId: string, claimId: string): void {
    this.order(orderId).claimId = claimId;
  }

  timelineKinds(orderId: string): string[] {
    return this.timelineEntries.filter((entry) => entry.orderId === orderId).map((entry) => entry.kind);
  }

  timelineEntry(orderId: string, kind: string): TimelineEntry | undefined {
    return this.timelineEntries.filter((entry) => entry.orderId === orderId && entry.kind === kind).at(-1);
  }

  stripeCallsOf(method: string): Call[] {
    return this.stripeCalls.filter((call) => call.method === method);
  }

  /** The result an idempotency key first produced (Stripe replays it for a repeated key). */
  private idempotent<T>(method: string, args: unknown[], key: string, act: () => T): T {
    this.stripeCalls.push({ method, args });
    const replayKey = `${method}:${key}`;
    if (this.stripeKeys.has(replayKey)) return this.stripeKeys.get(replayKey) as T;
    const result = act();
    this.stripeKeys.set(replayKey, result);
    return result;
  }

  private recordEntry(orderId: string, kind: string, detail: Record<string, unknown>, runId?: string): void {
    // A unique (order, kind, run) index: a retried step records nothing more.
    const duplicate =
      runId !== undefined &&
      this.timelineEntries.some((e) => e.orderId === orderId && e.kind === kind && e.runId === runId);
    if (duplicate) return;
    // JSON, as the jsonb column stores it.
    const stored = JSON.parse(JSON.stringify(detail)) as Record<string, unknown>;
    this.timelineEntries.push({ orderId, kind, detail: stored, runId: runId ?? null, at: new Date() });
  }

  private guarded<T>(
    orderId: string,
    claimId: string,
    write: (order: Order) => T,
    already?: { landedIn: readonly OrderStatus[]; written: T },
  ): Guarded<T> {
    const order = this.orders.get(orderId);
    if (!order || order.claimId !== claimId) return { landed: false, reason: "superseded" };
    if (already?.landedIn.includes(order.status)) return { landed: true, value: already.written };
    if (order.cancelRequestedAt !== null || order.status !== "fulfilling")
      return { landed: false, reason: "cancelled" };
    return { landed: true, value: write(order) };
  }

  private upsertPayment(
    orderId: string,
    providerId: string,
    currency: string,
    data: Partial<PaymentRecord> & { status: PaymentRecord["status"] },
  ): PaymentRecord {
    const existing = this.paymentRows.get(orderId);
    const row = existing
      ? { ...existing, ...data }
      : {
          id: `pay_${orderId.slice(0, 8)}`,
          orderId,
          providerId,
          currency,
          amountAuthorized: 0,
          amountCaptured: 0,
          amountRefunded: 0,
          ...data,
        };
    this.paymentRows.set(orderId, row);
    return row;
  }

  private sendEmail(key: string, orderId: string, template: string, args: unknown[]): EmailOutcome {
    const messageId = `<${key}@shop.test>`;
    if (this.emails.some((email) => email.key === key))
      return { idempotencyKey: key, status: "already-sent", messageId };
    this.emails.push({ key, orderId, template, args });
    return { idempotencyKey: key, status: "sent", messageId };
  }

  readonly ordersPort: OrderRepository = {
    findForFulfilment: async (orderId) => {
      const order = this.orders.get(orderId);
      if (!order) return null;
      const { attentionReason: _attention, ...view } = order;
      return {
        ...view,
        lines: linesBySku(order),
        hasShipment: this.shipmentRows.has(orderId),
      };
    },
    claim: async (orderId, claimId, options = {}): Promise<ClaimOutcome> => {
      this.maybeFail("orders.claim");
      const order = this.orders.get(orderId);
      if (!order) return { claimed: false, reason: "not-found" };
      if (
        order.claimId === null &&
        order.cancelRequestedAt === null &&
        claimableStatuses.includes(order.status)
      ) {
        order.claimId = claimId;
        this.moveTo(order, "fulfilling");
        // As the real statement: given the run, it writes the `claimed` entry and returns the order.
        if (options.runId === undefined) return { claimed: true };
        this.recordEntry(orderId, "claimed", { claimId }, options.runId);
        return {
          claimed: true,
          order: {
            paymentIntentId: order.paymentIntentId,
            lines: linesBySku(order),
          },
        };
      }
      const booked = order.status === "shipped" || order.status === "delivered";
      // A retried claim step finds its own claim already in place.
      if (order.claimId === claimId) return booked ? { claimed: true, booked } : { claimed: true };
      if (
        booked &&
        order.claimId === null &&
        order.cancelRequestedAt === null &&
        this.shipmentRows.has(orderId)
      ) {
        // Re-driven after its parcel was booked: taken without moving the order.
        order.claimId = claimId;
        return { claimed: true, booked: true };
      }
      if (order.claimId !== null) return { claimed: false, reason: "claimed-by-another-run" };
      if (order.cancelRequestedAt !== null) return { claimed: false, reason: "cancel-requested" };
      if (awaitingPaymentStatuses.includes(order.status)) return { claimed: false, reason: "not-paid-yet" };
      return { claimed: false, reason: "not-payable" };
    },
    transition: async (orderId, from, to, entry) => {
      const order = this.orders.get(orderId);
      // The entry rides in the transition's statement, whether or not the order moves.
      if (entry) this.recordEntry(orderId, entry.kind, entry.detail, entry.runId);
      if (!order || !from.includes(order.status)) return false;
      this.moveTo(order, to);
      return true;
    },
    flagForOps: async (orderId, reason) => {
      const order = this.orders.get(orderId);
      if (order) order.attentionReason = reason;
    },
    requestCancellation: async (orderId, cancellableFrom) => {
      const order = this.orders.get(orderId);
      if (!order || !cancellableFrom.includes(order.status) || this.shipmentRows.has(orderId)) return false;
      order.cancelRequestedAt = new Date();
      return true;
    },
  };

  readonly fulfilmentPort: FulfilmentRecords = {
    recordCapture: async (capture) => {
      const { orderId, claimId, runId, paymentIntentId, amountCaptured, currency } = capture;
      return this.guarded(orderId, claimId, () => {
        const data = {
          status: "captured" as const,
          amountCaptured,
          amountAuthorized: capture.amountAuthorized ?? amountCaptured,
          ...(capture.amountRefunded !== undefined ? { amountRefunded: capture.amountRefunded } : {}),
        };
        const payment = this.upsertPayment(orderId, paymentIntentId, currency, data);
        this.recordEntry(
          orderId,
          "payment-captured",
          { paymentIntentId, amountCaptured, currency, alreadyCaptured: capture.alreadyCaptured },
          runId,
        );
        return { paymentId: payment.id };
      });
    },
    recordShipment: async ({ orderId, claimId, runId, parcels }) =>
      this.guarded(
        orderId,
        claimId,
        (order) => {
          // Parcel 1 is the order's shipment row here (later ones: `laterParcels`, for a re-drive).
          const booking = parcels?.[0] ?? null;
          if (booking === null) {
            this.moveTo(order, "delivered");
            this.recordEntry(orderId, "nothing-to-ship", {}, runId);
          } else {
            if (!this.shipmentRows.has(orderId))
              this.shipmentRows.set(orderId, { ...booking, status: "booked" });
            this.moveTo(order, "shipped");
            const { carrier, trackingNumber, trackingUrl } = booking;
            this.recordEntry(orderId, "shipment-booked", { carrier, trackingNumber, trackingUrl }, runId);
          }
          return null;
        },
        { landedIn: shippedStatuses, written: null },
      ),
    beginLabelPurchase: async (orderId, claimId) => {
      const order = this.orders.get(orderId);
      if (!order || order.claimId !== claimId) return "superseded";
      if (shippedStatuses.includes(order.status)) return "booked";
      if (order.cancelRequestedAt !== null || order.status !== "fulfilling") return "cancelled";
      const hold = this.holdRows.get(orderId);
      if (hold && hold.reason !== "fulfilment_window") return "held";
      return "go";
    },
    endLabelPurchase: async () => undefined,
    labelsStillWanted: async (orderId, trackingNumbers) => {
      const order = this.orders.get(orderId);
      if (!order) return false;
      const row = this.shipmentRows.get(orderId);
      return labelWanted({
        status: order.status,
        cancelRequested: order.cancelRequestedAt !== null,
        recorded: row !== undefined && trackingNumbers.includes(row.trackingNumber),
      });
    },
    fenceForCancel: async (orderId): Promise<FenceOutcome> => {
      const order = this.orders.get(orderId);
      if (!order) return "not-found";
      if (this.shipmentRows.has(orderId) || shippedStatuses.includes(order.status)) return "shipped";
      order.cancelRequestedAt ??= new Date();
      return "fenced";
    },
  };

  readonly timelinePort: Timeline = {
    record: async (orderId, kind, detail = {}, runId) => {
      this.timelineWrites.push({ orderId, kind });
      this.recordEntry(orderId, kind, detail, runId);
    },
    recordMany: async (entries) => {
      for (const { orderId, kind, detail, runId } of entries) {
        this.timelineWrites.push({ orderId, kind });
        this.recordEntry(orderId, kind, detail ?? {}, runId);
      }
    },
    list: async (orderId) =>
      this.timelineEntries
        .filter((entry) => entry.orderId === orderId)
        .map(({ kind, detail, runId, at }) => ({ kind, detail, runId, at })),
    claimingRunOf: async (orderId) =>
      this.timelineEntries.filter((e) => e.orderId === orderId && e.kind === "claimed").at(-1)?.runId ?? null,
    orderOfRun: async (runId) => this.timelineEntries.find((e) => e.runId === runId)?.orderId ?? null,
  };

  readonly inventoryPort: InventoryRepository = {
    listProducts: async () => this.productViews([...this.products.keys()]),
    findProducts: async (skus) => this.productViews(skus.filter((sku) => this.products.has(sku))),
    reserve: async (orderId, lines, guard, options): Promise<ReserveOutcome & { entriesRecorded?: true }> => {
      this.maybeFail("inventory.reserve");
      const sorted = [...lines].sort((a, b) => a.sku.localeCompare(b.sku));
      if (guard) {
        const order = this.orders.get(orderId);
        if (order?.claimId !== guard.claimId) return { ok: false, reason: "superseded" };
        if (order.status !== "fulfilling" || order.cancelRequestedAt !== null)
          return { ok: false, reason: "cancelled" };
      }
      // As stock-holds' convert: an existing reservation, or the checkout hold taken over, is
      // answered by one statement that also writes the run's entries when given the run (and says
      // so, given a record, whether or not it named the run).
      const answered = (outcome: { ok: true; reserved: ReservationLine[]; short?: ShortLine[] }) => {
        const runId = options?.record?.runId;
        if (runId !== undefined) {
          this.recordEntry(orderId, "stock-reserved", { ...outcome }, runId);
          if (outcome.short)
            this.recordEntry(
              orderId,
              "lines-short",
              { short: outcome.short, reserved: outcome.reserved },
              runId,
            );
        }
        return options?.record ? { ...outcome, entriesRecorded: true as const } : outcome;
      };
      const existing = this.reservations.get(orderId);
      if (existing)
        return answered({
          ok: true,
          reserved: existing.lines.map((line) => ({ ...line })),
          ...(existing.short ? { short: existing.short.map((line) => ({ ...line })) } : {}),
        });
      const hold = this.holds.get(orderId);
      if (hold?.status === "held") {
        // The units left stock with the hold: the reservation takes them over.
        hold.status = "converted";
        this.reservations.set(orderId, {
          lines: hold.lines.map((line) => ({ ...line })),
          status: "reserved",
        });
        return answered({ ok: true, reserved: hold.lines.map((line) => ({ ...line })) });
      }
      if (options?.allowShort) {
        const takes = sorted.map((line) => ({
          ...line,
          take: Math.min(this.products.get(line.sku)?.stock ?? 0, line.quantity),
        }));
        if (takes.some((line) => line.take > 0)) {
          const order = this.order(orderId);
          const reserved = takes
            .filter((line) => line.take > 0)
            .map(({ sku, take }) => ({ sku, quantity: take }));
          const short: ShortLine[] = takes
            .filter((line) => line.take < line.quantity)
            .map((line) => ({
              sku: line.sku,
              requested: line.quantity,
              short: line.quantity - line.take,
              amount:
                (order.lines.find((orderLine) => orderLine.sku === line.sku)?.unitPrice ?? 0) *
                (line.quantity - line.take),
            }));
          for (const line of reserved) this.product(line.sku).stock -= line.quantity;
          this.reservations.set(orderId, {
            lines: reserved.map((line) => ({ ...line })),
            status: "reserved",
            ...(short.length > 0 ? { short } : {}),
          });
          return { ok: true, reserved, ...(short.length > 0 ? { short } : {}) };
        }
      }
      const short = sorted.find((line) => (this.products.get(line.sku)?.stock ?? 0) < line.quantity);
      if (short) {
        return {
          ok: false,
          reason: "out_of_stock",
          sku: short.sku,
          requested: short.quantity,
          available: this.products.get(short.sku)?.stock ?? 0,
        };
      }
      for (const line of sorted) this.product(line.sku).stock -= line.quantity;
      this.reservations.set(orderId, { lines: sorted.map((line) => ({ ...line })), status: "reserved" });
      return { ok: true, reserved: sorted };
    },
    release: async (orderId) => {
      const released: ReservationLine[] = [];
      for (const taken of [this.reservations.get(orderId), this.holds.get(orderId)]) {
        if (taken?.status !== "reserved" && taken?.status !== "held") continue;
        taken.status = "released";
        for (const line of taken.lines) this.product(line.sku).stock += line.quantity;
        released.push(...taken.lines.map((line) => ({ ...line })));
      }
      return released;
    },
  };

  private productViews(skus: string[]) {
    return skus.map((sku) => {
      const product = this.product(sku);
      return {
        sku,
        name: `Product ${sku}`,
        unitPrice: 2500,
        currency: "eur",
        quantityAvailable: product.stock,
        ...(product.digital ? { digital: true } : {}),
      };
    });
  }

  readonly paymentsPort: PaymentGateway = {
    retrieve: async (paymentIntentId): Promise<PaymentIntentView> => {
      this.stripeCalls.push({ method: "retrieve", args: [paymentIntentId] });
      this.maybeFail("payments.retrieve");
      return { ...this.intent(paymentIntentId) };
    },
    capture: async (paymentIntentId, idempotencyKey, amountToCapture) => {
      this.maybeFail("payments.capture");
      const intent = this.intent(paymentIntentId);
      if (intent.state === "succeeded") {
        this.stripeCalls.push({ method: "capture", args: [paymentIntentId, idempotencyKey] });
        const { amountCaptured, currency } = intent;
        return { paymentIntentId, amountCaptured, currency, alreadyCaptured: true };
      }
      if (intent.state !== "requires_capture") {
        this.stripeCalls.push({ method: "capture", args: [paymentIntentId, idempotencyKey] });
        throw new PaymentRejectedError(
          "unexpected_state",
          `PaymentIntent ${paymentIntentId} is ${intent.state}`,
        );
      }
      const args =
        amountToCapture === undefined
          ? [paymentIntentId, idempotencyKey]
          : [paymentIntentId, idempotencyKey, amountToCapture];
      return this.idempotent("capture", args, idempotencyKey, () => {
        // A partial capture releases the rest of the hold; what is captured is all there is.
        const amount = amountToCapture ?? intent.amount;
        intent.state = "succeeded";
        intent.amountCaptured = amount;
        return {
          paymentIntentId,
          amountCaptured: amount,
          currency: intent.currency,
          alreadyCaptured: false,
        };
      });
    },
    voidAuthorization: async (paymentIntentId, idempotencyKey) => {
      this.maybeFail("payments.voidAuthorization");
      const intent = this.intent(paymentIntentId);
      return this.idempotent("voidAuthorization", [paymentIntentId, idempotencyKey], idempotencyKey, () => {
        if (intent.state === "canceled")
          return { paymentIntentId, outcome: "already-voided" as const, state: intent.state };
        if (intent.state !== "requires_capture")
          return { paymentIntentId, outcome: "not-voidable" as const, state: intent.state };
        intent.state = "canceled";
        intent.cancellationReason = "abandoned";
        return { paymentIntentId, outcome: "voided" as const, state: intent.state };
      });
    },
    refundInFull: async (paymentIntentId, idempotencyKey) => {
      this.maybeFail("payments.refundInFull");
      const intent = this.intent(paymentIntentId);
      return this.idempotent("refundInFull", [paymentIntentId, idempotencyKey], idempotencyKey, () => {
        // Stripe refunds what is left of the capture.
        const amount = intent.amountCaptured - intent.amountRefunded;
        intent.amountRefunded += amount;
        this.refundCounter += 1;
        return { paymentIntentId, refundId: `re_${this.refundCounter}`, amountRefunded: amount };
      });
    },
    chargeOffSession: async (charge, idempotencyKey) => {
      this.maybeFail("payments.chargeOffSession");
      return this.idempotent("chargeOffSession", [charge, idempotencyKey], idempotencyKey, () => {
        const paymentIntentId = `pi_off_session_${this.intents.size + 1}`;
        this.intents.set(paymentIntentId, {
          id: paymentIntentId,
          state: "succeeded",
          cancellationReason: null,
          amount: charge.amount,
          amountCaptured: charge.amount,
          amountRefunded: 0,
          currency: charge.currency,
        });
        return { paymentIntentId, amount: charge.amount, currency: charge.currency, replayed: false };
      });
    },
    refundAmount: async (paymentIntentId, amount, idempotencyKey) => {
      this.maybeFail("payments.refundAmount");
      const intent = this.intent(paymentIntentId);
      return this.idempotent(
        "refundAmount",
        [paymentIntentId, amount, idempotencyKey],
        idempotencyKey,
        () => {
          if (amount > intent.amountCaptured - intent.amountRefunded)
            throw new Error(`refund of ${amount} is more than is left of ${paymentIntentId}`);
          intent.amountRefunded += amount;
          this.refundCounter += 1;
          return { paymentIntentId, refundId: `re_${this.refundCounter}`, amountRefunded: amount };
        },
      );
    },
  };

  /** A partial refund made outside the workflow (the admin API). */
  // (refundAmount above is the workflow's own partial refund, by key.)
  refundPartly(paymentIntentId: string, amount: number): void {
    this.intent(paymentIntentId).amountRefunded += amount;
  }

  /** Open or lost chargebacks by order, as the disputes table holds them (none unless planted). */
  readonly disputeHolds = new Map<string, DisputeHold>();

  readonly disputesPort: WorkflowDependencies["disputes"] = {
    holdOf: async (orderId) => this.disputeHolds.get(orderId) ?? { amount: 0, disputes: [] },
  };

  readonly paymentRecordsPort: PaymentRepository = {
    recordCaptured: async (orderId, providerId, amount, currency) =>
      this.upsertPayment(orderId, providerId, currency, {
        status: "captured",
        amountCaptured: amount,
        amountAuthorized: amount,
      }),
    recordVoided: async (orderId, providerId, currency) => {
      this.upsertPayment(orderId, providerId, currency, {
        status: "voided",
        amountAuthorized: this.orders.get(orderId)?.total ?? 0,
      });
    },
    recordRefunded: async (orderId, amount) => {
      const row = this.paymentRows.get(orderId);
      if (!row) throw new Error(`no payment for ${orderId}`);
      this.paymentRows.set(orderId, { ...row, status: "refunded", amountRefunded: amount });
    },
    recordRefund: async (orderId, providerId, currency, amounts) => {
      this.upsertPayment(orderId, providerId, currency, {
        status: "refunded",
        amountCaptured: amounts.captured,
        amountAuthorized: amounts.captured,
        amountRefunded: amounts.refunded,
      });
    },
    recordFailed: async (orderId, providerId, currency) => {
      this.upsertPayment(orderId, providerId, currency, { status: "failed" });
    },
    findByOrder: async (orderId) => {
      const row = this.paymentRows.get(orderId);
      if (!row) return null;
      const { currency: _currency, ...record } = row;
      return record;
    },
  };

  private isDigitalOnly(orderId: string): boolean {
    return this.order(orderId).lines.every((line) => this.products.get(line.sku)?.digital === true);
  }

  private pick(booking: CarrierBooking): ShipmentNotice {
    return {
      carrier: booking.carrier,
      trackingNumber: booking.trackingNumber,
      trackingUrl: booking.trackingUrl,
    };
  }

  private carrierBook(orderId: string): CarrierBooking {
    const existing = this.carrierBookings.get(orderId);
    if (existing) return existing;
    const trackingNumber = `TRK${this.carrierBookings.size + 1}`;
    const booking: CarrierBooking = {
      carrier: "FakePost",
      trackingNumber,
      trackingUrl: `https://track.example/${trackingNumber}`,
      service: "Ground",
      labelUrl: `https://labels.example/${trackingNumber}.pdf`,
      providerId: `shp_${trackingNumber}`,
    };
    this.carrierBookings.set(orderId, booking);
    return booking;
  }

  readonly shipmentsPort: ShipmentBooking = {
    book: async ({ orderId, lines }) => {
      const recorded = this.shipmentRows.get(orderId);
      if (recorded) return [{ ...this.pick(recorded), parcelNumber: 1, lines }];
      if (this.isDigitalOnly(orderId)) return null;
      const booking = this.carrierBook(orderId);
      this.shipmentRows.set(orderId, { ...booking, status: "booked" });
      return [{ ...this.pick(booking), parcelNumber: 1, lines }];
    },
    bookWithCarrier: async ({ orderId, lines }) => {
      this.maybeFail("shipments.bookWithCarrier");
      this.bookedLines.set(
        orderId,
        lines.map((line) => ({ ...line })),
      );
      const recorded = this.shipmentRows.get(orderId);
      if (recorded) return [{ ...this.pick(recorded), parcelNumber: 1, lines }];
      if (this.isDigitalOnly(orderId)) return null;
      // The whole booking (label, service, the carrier's id), for the guarded record to store;
      // parcels after the first get their own tracking number and label.
      const booking = this.carrierBook(orderId);
      const count = this.parcelsPerOrder.get(orderId) ?? 1;
      return Array.from({ length: count }, (_, index) => {
        const suffix = index === 0 ? "" : `-${index + 1}`;
        return {
          ...booking,
          trackingNumber: `${booking.trackingNumber}${suffix}`,
          labelUrl: `https://labels.example/${booking.trackingNumber}${suffix}.pdf`,
          providerId: `${booking.providerId}${suffix}`,
          parcelNumber: index + 1,
          lines,
        };
      });
    },
    verifyDestination: async (orderId) => this.addressVerdicts.get(orderId) ?? null,
    // As the real one: the verdict and the hold from one read of the order (the hold read first).
    verifyDestinationWithHold: async (orderId) => {
      const held = await this.holdsPort.current(orderId);
      return {
        verdict: this.addressVerdicts.get(orderId) ?? null,
        hold: held ? { reason: held.reason, holdId: held.holdId } : null,
      };
    },
    voidWithCarrier: async (_orderId, booking) => {
      this.voidedLabels.push(booking.trackingNumber);
      return this.carrierVoidOutcome;
    },
    findByOrder: async (orderId) => {
      const recorded = this.shipmentRows.get(orderId);
      if (!recorded) return [];
      const later = (this.laterParcels.get(orderId) ?? []).map((parcel) => ({
        ...parcel,
        lines: [],
        status: parcel.deliveredAt ? ("delivered" as const) : ("booked" as const),
      }));
      return [
        {
          ...this.pick(recorded),
          parcelNumber: 1,
          lines: [],
          status: recorded.status,
          deliveredAt: recorded.deliveredAt ?? null,
        },
        ...later,
      ];
    },
  };

  /** Holds by order id, as the orders table keeps them. */
  readonly holdRows = new Map<string, Hold>();
  /** Every hold placed or released, in order, with who did it (what the timeline records). */
  readonly holdChanges: {
    orderId: string;
    change: "placed" | "released";
    reason: string;
    by: string | null;
  }[] = [];
  private holdCounter = 0;

  readonly holdsPort: WorkflowDependencies["holds"] = {
    current: async (orderId) => {
      this.maybeFail("holds.current");
      return this.holdRows.get(orderId) ?? null;
    },
    placeHold: async (orderId, reason, options = {}) => {
      // As the real one: only an open order with no parcel booked can be held.
      const status = this.orders.get(orderId)?.status;
      if (!status || !holdableStatuses.includes(status) || this.shipmentRows.has(orderId)) return null;
      const existing = this.holdRows.get(orderId);
      if (existing && !(existing.reason === "fulfilment_window" && reason !== "fulfilment_window"))
        return null;
      const since = new Date();
      // Unique per hold, as the real one (its placing time) is in practice.
      this.holdCounter += 1;
      const hold: Hold = {
        reason,
        note: options.note ?? null,
        since,
        by: options.by ?? null,
        holdId: `hold-${this.holdCounter}`,
      };
      this.holdRows.set(orderId, hold);
      this.holdChanges.push({ orderId, change: "placed", reason, by: hold.by });
      return hold;
    },
    releaseHold: async (orderId, options = {}) => {
      const held = this.holdRows.get(orderId);
      if (!held || (options.onlyReason && held.reason !== options.onlyReason)) return null;
      this.holdRows.delete(orderId);
      this.holdChanges.push({ orderId, change: "released", reason: held.reason, by: options.by ?? null });
      return held;
    },
  };

  /** The label of a cancelled shipped order, handed back as the fake carrier's void answers. */
  readonly labelsPort: WorkflowDependencies["labels"] = {
    voidable: async (orderId) => this.shipmentRows.has(orderId),
    voidLabel: async (orderId) => {
      const recorded = this.shipmentRows.get(orderId);
      if (!recorded) return { outcome: "no-label" };
      this.voidedLabels.push(recorded.trackingNumber);
      const answer = this.carrierVoidOutcome;
      if (answer === "voided" || answer === "already-voided" || answer === "refunded")
        return { outcome: "requested", status: "refunded" };
      if (answer === "submitted") return { outcome: "requested", status: "submitted" };
      return { outcome: "needs-ops", why: answer === "rejected" ? "rejected" : "not-voidable" };
    },
    checkRefund: async () => null,
    voidShipment: async () => ({ outcome: "needs-ops", why: "not-voidable" }),
    isVoidable: () => false,
    trackingStarted: async () => 0,
    untrackedRefunds: async () => [],
    handBackUnrecorded: async (label) => {
      this.voidedLabels.push(label.trackingNumber);
      return "requested";
    },
  };

  readonly messagesPort: CustomerMessages = {
    shipped: async (orderId, parcels, record) => {
      this.maybeFail("messages.shipped");
      this.trackingEmailParcels.set(
        orderId,
        parcels.map((parcel) => ({ ...parcel })),
      );
      // The e-mail's arguments keep the first parcel's notice, as before orders had several.
      const [first] = parcels;
      const outcome = await this.sendEmail(emailKeys.shipped(orderId), orderId, "shipped", [
        first
          ? { carrier: first.carrier, trackingNumber: first.trackingNumber, trackingUrl: first.trackingUrl }
          : null,
      ]);
      // As the real sender: the entry with the outcome, once per (order, kind, run).
      if (record) this.recordEntry(orderId, record.kind, { ...outcome }, record.runId);
      return outcome;
    },
    reshipped: async (orderId, shipmentId, parcel) =>
      this.sendEmail(emailKeys.reshipped(shipmentId), orderId, "shipped", [parcel]),
    reviewRequest: async (orderId, completion) => {
      const outcome = this.sendEmail(emailKeys.reviewRequest(orderId), orderId, "review-request", []);
      // As the real sender: the move and its entry with the outcome (the entry whether or not it moves).
      if (completion) {
        this.recordEntry(orderId, completion.kind, { ...outcome, ...completion.detail }, completion.runId);
        const order = this.orders.get(orderId);
        if (order && completion.from.includes(order.status)) this.moveTo(order, completion.to);
      }
      return outcome;
    },
    paymentFailed: async (orderId, reason) =>
      this.sendEmail(emailKeys.paymentFailed(orderId), orderId, "payment-failed", [reason]),
    outOfStock: async (orderId, sku, settlement: PaymentSettlement) =>
      this.sendEmail(emailKeys.outOfStock(orderId), orderId, "out-of-stock", [sku, settlement]),
    cancelled: async (orderId, settlement: PaymentSettlement) =>
      this.sendEmail(emailKeys.cancelled(orderId), orderId, "cancelled", [settlement]),
    deliveryException: async (orderId, exception) =>
      this.sendEmail(emailKeys.deliveryException(orderId, exception.kind), orderId, "delivery-exception", [
        exception.kind,
      ]),
    shortLines: async (orderId, notice) =>
      this.sendEmail(emailKeys.shortLines(orderId), orderId, "short-lines", [notice]),
    addressUndeliverable: async (orderId, message, holdId) =>
      this.sendEmail(emailKeys.addressCorrection(orderId, holdId), orderId, "address-correction", [message]),
  };

  readonly alertsPort: Alerter = {
    runFailed: async (failure) => {
      this.runFailures.push(failure);
    },
    notify: async (notice) => {
      this.notices.push(notice);
    },
  };

  emailsTo(orderId: string): string[] {
    return this.emails.filter((email) => email.orderId === orderId).map((email) => email.template);
  }

  dependencies(settings: WorkflowSettings = defaultSettings): WorkflowDependencies {
    return {
      orders: this.ordersPort,
      fulfilment: this.fulfilmentPort,
      timeline: this.timelinePort,
      inventory: this.inventoryPort,
      payments: this.paymentsPort,
      paymentRecords: this.paymentRecordsPort,
      disputes: this.disputesPort,
      shipments: this.shipmentsPort,
      labels: this.labelsPort,
      holds: this.holdsPort,
      messages: this.messagesPort,
      emailOutbox: {
        drain: async () => unused("emailOutbox.drain"),
        sendQueued: async () => unused("emailOutbox.sendQueued"),
      },
      alertOutbox: {
        drain: async () => unused("alertOutbox.drain"),
        deliverGroup: async () => unused("alertOutbox.deliverGroup"),
      },
      alerts: this.alertsPort,
      settings,
      recovery: new Proxy({} as WorkflowDependencies["recovery"], {
        get: (_target, name) => unused(`recovery.${String(name)}`),
      }),
    };
  }
}

/** fulfill-order uses neither the outbox nor the recovery ports; a call to them is a test bug. */
function unused(what: string): never {
  throw new Error(`${what} is not faked: fulfill-order should not call it`);
}

/** A Stripe decline as the gateway reports it. */
export function declined(reason: PaymentRejectionReason = "declined"): PaymentRejectedError {
  return new PaymentRejectedError(reason, "Your card was declined.", { code: "card_declined" });
}
