import { createHash } from "node:crypto";
import type Stripe from "stripe";
import { z } from "zod";
import type { Alerter } from "../alerts";
import type { Database } from "../db/client";
import { AppError } from "../errors";
import type { Logger } from "../logger";
import {
  breakdownOf,
  storedBreakdown,
  type LineMoney,
  type MoneyBreakdown,
} from "../payments/money-breakdown";
import type { CarrierLedger, CarrierShipment } from "./carrier-ledger";
import { labelVoidsOfDay, type LabelVoid } from "./label-voids";
import { dateIn, shopDay, type ShopDay } from "./shop-day";
import type { StripeLedger } from "./stripe-ledger";

/** Who ran a reconciliation: recorded on its report. */
export type ReconciliationActor = "cron" | "admin-api" | "ops-console" | "cli";

const components = ["subtotal", "shipping", "discount", "tax", "total"] as const;

function pickComponents(money: MoneyBreakdown) {
  return Object.fromEntries(components.map((name) => [name, money[name]]));
}

/** The components (and lines, by SKU) in which two breakdowns differ. */
function breakdownDifferences(ours: MoneyBreakdown, theirs: MoneyBreakdown): string[] {
  const differing: string[] = components.filter((name) => ours[name] !== theirs[name]);
  const key = (line: LineMoney) =>
    [line.quantity, line.amountSubtotal, line.amountDiscount, line.amountTax, line.amountTotal].join("/");
  const lines = new Set([...ours.lines, ...theirs.lines].map((line) => line.sku));
  for (const sku of [...lines].sort()) {
    const a = ours.lines.find((line) => line.sku === sku);
    const b = theirs.lines.find((line) => line.sku === sku);
    if (!a || !b || key(a) !== key(b)) differing.push(`line ${sku}`);
  }
  return differing;
}

export const mismatchKinds = [
  // A captured charge at Stripe that no order of ours knows.
  "charge_without_order",
  // Stripe captured money for an order our records say was not captured.
  "capture_not_recorded",
  // Captured at Stripe for another amount or currency than we recorded.
  "capture_differs",
  // A refund at Stripe we have no record of (a Dashboard refund whose webhook was lost, say).
  "refund_not_recorded",
  // A refund we recorded for another amount or outcome than Stripe's.
  "refund_differs",
  // A refund we recorded as made that Stripe does not have.
  "refund_not_at_stripe",
  // A label the carrier charged for that belongs to no shipment of ours.
  "label_without_shipment",
  // A label we voided that the carrier has not refunded.
  "void_not_refunded",
  // Paid, and still not shipped after RECONCILIATION_SHIP_WITHIN.
  "not_shipped_in_time",
  // A dispute still open at Stripe.
  "dispute_open",
  // A dispute we recorded (from a webhook signed with our secret) that Stripe does not have.
  "dispute_not_at_stripe",
  // A product whose stock on hand is not the sum of its stock movements (changed without its row).
  "stock_ledger_differs",
  // The money breakdown the intake recorded (subtotal, shipping, discount, tax, total, a line's
  // amounts) is not what Stripe's Checkout Session says (issue 39).
  "breakdown_differs",
] as const;
export type MismatchKind = (typeof mismatchKinds)[number];

export interface Mismatch {
  kind: MismatchKind;
  orderId: string | null;
  /** The Stripe or carrier object the row is about, or the order. */
  reference: string;
  /** Our side's value; null when we have nothing. */
  ours: unknown;
  /** Stripe's or the carrier's value; null when they have nothing. */
  theirs: unknown;
  detail: string;
}

export interface CurrencyTotals {
  /** Stripe's balance transactions of the day, in minor units. */
  stripe: { charges: number; refunds: number; disputes: number; gross: number; fees: number; net: number };
  /** What our records say for the same charges and refunds. */
  ours: { captured: number; refunded: number };
}

export interface ReconciliationReport {
  id: string;
  date: string;
  timeZone: string;
  ranBy: string;
  startedAt: string;
  finishedAt: string;
  stripeTransactions: number;
  carrierShipments: number;
  totals: Record<string, CurrencyTotals>;
  counts: Partial<Record<MismatchKind, number>>;
  mismatchCount: number;
  mismatches: (Mismatch & { link: string })[];
  reportUrl: string;
}

export type ReconciliationSummary = Omit<ReconciliationReport, "mismatches">;

export interface Reconciliation {
  /**
   * Reconciles one shop day (YYYY-MM-DD; unset: today in the shop's time zone, so far) and
   * replaces that day's report.
   */
  run(request: { date?: unknown; by: ReconciliationActor }): Promise<ReconciliationReport>;
  find(id: unknown): Promise<ReconciliationReport>;
  /** The day's report (as a list of zero or one), or the latest reports without a date. */
  list(query: { date?: unknown }): Promise<ReconciliationSummary[]>;
  readonly timeZone: string;
}

export interface ReconciliationDeps {
  db: Database;
  stripe: StripeLedger;
  /** EasyPost's labels (or its stand-in's); unset when no carrier is wired (tests of the Stripe side). */
  carrier?: CarrierLedger;
  alerts: Pick<Alerter, "notify">;
  logger: Logger;
  timeZone: string;
  shipWithinMs: number;
  /**
   * The stock ledger's own check (src/inventory/stock-ledger.ts): a state, not the day's
   * movements, so every run reports the products whose stock is not the sum of their movements.
   */
  stockLedger?: { mismatches(): Promise<{ sku: string; stockOnHand: number; ledgerSum: number }[]> };
  /** The ops console's page of a report, of an order and of a product. */
  reportUrl(runId: string): string;
  orderUrl(orderId: string): string;
  productUrl?(sku: string): string;
  now?: () => Date;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const refundedByCarrier = new Set(["submitted", "refunded"]);
const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value == null ? null : typeof value === "string" ? value : value.id;

/** Stripe's dashboard page of an object, for rows no order of ours can link. */
function stripeDashboardUrl(reference: string, livemode: boolean): string | null {
  const base = `https://dashboard.stripe.com${livemode ? "" : "/test"}`;
  if (reference.startsWith("ch_") || reference.startsWith("pi_")) return `${base}/payments/${reference}`;
  if (reference.startsWith("re_")) return `${base}/refunds/${reference}`;
  if (reference.startsWith("dp_")) return `${base}/disputes/${reference}`;
  return null;
}

interface OrderRef {
  id: string;
  status: string;
  checkoutSessionId?: string | null;
  moneyBreakdown?: unknown;
}

interface PaymentRef {
  orderId: string;
  currency: string;
  amountCaptured: number;
  amountRefunded: number;
}

/** Our records for one page of Stripe's ledger, fetched in a few queries for the whole page. */
async function ourRecordsFor(db: Database, transactions: Stripe.BalanceTransaction[]) {
  const intents = new Set<string>();
  const refundIds: string[] = [];
  for (const transaction of transactions) {
    const source = transaction.source;
    if (typeof source !== "object" || source === null) continue;
    if (source.object === "charge" || source.object === "refund") {
      const intent = idOf((source as Stripe.Charge | Stripe.Refund).payment_intent);
      if (intent) intents.add(intent);
    }
    if (source.object === "refund") refundIds.push(source.id);
  }
  const intentIds = [...intents];
  const [payments, orders, refunds, exchangeCharges] = await Promise.all([
    db.payment.findMany({
      where: { providerId: { in: intentIds } },
      select: {
        providerId: true,
        orderId: true,
        currency: true,
        amountCaptured: true,
        amountRefunded: true,
      },
    }),
    db.order.findMany({
      where: { paymentIntentId: { in: intentIds } },
      select: {
        id: true,
        status: true,
        paymentIntentId: true,
        checkoutSessionId: true,
        moneyBreakdown: true,
      },
    }),
    db.refund.findMany({
      where: { providerId: { in: refundIds } },
      select: { providerId: true, amount: true, currency: true, status: true, orderId: true },
    }),
    // A dearer exchange's difference is its own PaymentIntent (src/returns), kept on the return,
    // as is the refund of it when the exchange ended before it shipped.
    db.return.findMany({
      where: {
        OR: [{ exchangeChargeIntentId: { in: intentIds } }, { exchangeChargeRefundId: { in: refundIds } }],
      },
      select: {
        id: true,
        orderId: true,
        exchangeChargeIntentId: true,
        exchangeChargeAmount: true,
        exchangeChargeRefundId: true,
        order: { select: { currency: true } },
      },
    }),
  ]);
  const paymentByIntent = new Map<string, PaymentRef>(payments.map((p) => [p.providerId, p]));
  const orderByIntent = new Map<string, OrderRef>();
  for (const order of orders) if (order.paymentIntentId) orderByIntent.set(order.paymentIntentId, order);
  const missingOrders = payments.filter((p) => !orderByIntent.has(p.providerId)).map((p) => p.orderId);
  if (missingOrders.length > 0) {
    const byId = new Map(
      (
        await db.order.findMany({
          where: { id: { in: missingOrders } },
          select: { id: true, status: true },
        })
      ).map((order) => [order.id, order]),
    );
    for (const payment of payments) {
      const order = byId.get(payment.orderId);
      if (order && !orderByIntent.has(payment.providerId)) orderByIntent.set(payment.providerId, order);
    }
  }
  // The fulfilment's own refunds (a cancel's undo, the short lines of a partly fulfilled order)
  // are on the timeline with Stripe's refund id.
  const orderIds = [...new Set([...orderByIntent.values()].map((order) => order.id))];
  const timelineRefunds = new Map<string, number | null>();
  if (refundIds.length > 0 && orderIds.length > 0) {
    const entries = await db.orderTimelineEntry.findMany({
      where: {
        orderId: { in: orderIds },
        kind: { in: ["payment-refunded", "payment-captured-after-cancel", "short-lines-refunded"] },
      },
      select: { detail: true },
    });
    for (const { detail } of entries) {
      const { refundId, amount } = (detail ?? {}) as { refundId?: unknown; amount?: unknown };
      if (typeof refundId === "string")
        timelineRefunds.set(refundId, typeof amount === "number" ? amount : null);
    }
  }
  const exchangeByIntent = new Map(
    exchangeCharges.flatMap((r) =>
      r.exchangeChargeIntentId ? [[r.exchangeChargeIntentId, r] as const] : [],
    ),
  );
  const exchangeByRefund = new Map(
    exchangeCharges.flatMap((r) =>
      r.exchangeChargeRefundId ? [[r.exchangeChargeRefundId, r] as const] : [],
    ),
  );
  return {
    paymentByIntent,
    orderByIntent,
    exchangeByIntent,
    exchangeByRefund,
    refundById: new Map(refunds.flatMap((r) => (r.providerId ? [[r.providerId, r] as const] : []))),
    timelineRefunds,
  };
}

export function createReconciliation(deps: ReconciliationDeps): Reconciliation {
  const { db } = deps;
  const logger = deps.logger.child({ component: "reconciliation" });
  const now = deps.now ?? (() => new Date());

  /**
   * Each component of the breakdown the intake recorded, against the order's Checkout Session at
   * Stripe now: one `breakdown_differs` naming every component that differs. Orders without a
   * recorded breakdown, and ledgers that cannot read sessions, are not compared.
   */
  async function compareBreakdown(order: OrderRef, reference: string, found: Mismatch[]): Promise<void> {
    const ours = storedBreakdown(order.moneyBreakdown);
    if (!ours || !order.checkoutSessionId || !deps.stripe.checkoutSession) return;
    const session = await deps.stripe.checkoutSession(order.checkoutSessionId);
    const theirs = session ? breakdownOf(session) : null;
    const differing = theirs ? breakdownDifferences(ours, theirs) : ["the session"];
    if (differing.length === 0) return;
    found.push({
      kind: "breakdown_differs",
      orderId: order.id,
      reference,
      ours: { checkoutSession: order.checkoutSessionId, ...pickComponents(ours) },
      theirs: theirs ? pickComponents(theirs) : null,
      detail: theirs
        ? `The recorded ${differing.join(", ")} differ from Stripe's Checkout Session ${order.checkoutSessionId}`
        : `Stripe has no Checkout Session ${order.checkoutSessionId} for the recorded breakdown`,
    });
  }

  async function reconcileStripe(day: ShopDay, found: Mismatch[]) {
    const totals: Record<string, CurrencyTotals> = {};
    const seenRefunds = new Set<string>();
    let count = 0;
    const totalsOf = (currency: string): CurrencyTotals =>
      (totals[currency] ??= {
        stripe: { charges: 0, refunds: 0, disputes: 0, gross: 0, fees: 0, net: 0 },
        ours: { captured: 0, refunded: 0 },
      });

    for await (const page of deps.stripe.transactionPages(day)) {
      count += page.length;
      const ours = await ourRecordsFor(db, page);
      for (const transaction of page) {
        const sum = totalsOf(transaction.currency);
        sum.stripe.gross += transaction.amount;
        sum.stripe.fees += transaction.fee;
        sum.stripe.net += transaction.net;
        const source = transaction.source;
        if (typeof source !== "object" || source === null) continue;

        if (source.object === "charge") {
          sum.stripe.charges += transaction.amount;
          const charge = source as Stripe.Charge;
          const intent = idOf(charge.payment_intent);
          const order = intent ? ours.orderByIntent.get(intent) : undefined;
          const payment = intent ? ours.paymentByIntent.get(intent) : undefined;
          const theirs = { charge: charge.id, amount: charge.amount_captured, currency: charge.currency };
          const exchange = intent ? ours.exchangeByIntent.get(intent) : undefined;
          if (exchange) {
            // A dearer exchange's difference: ours as the return recorded it.
            const amount = exchange.exchangeChargeAmount ?? 0;
            sum.ours.captured += amount;
            const currency = exchange.order.currency.trim().toLowerCase();
            if (amount !== charge.amount_captured || currency !== charge.currency.toLowerCase()) {
              found.push({
                kind: "capture_differs",
                orderId: exchange.orderId,
                reference: charge.id,
                ours: { amount, currency, returnId: exchange.id },
                theirs,
                detail: `We recorded ${amount} ${currency} charged for the exchange of return ${exchange.id}, Stripe ${charge.amount_captured} ${charge.currency}`,
              });
            }
          } else if (!order) {
            found.push({
              kind: "charge_without_order",
              orderId: null,
              reference: charge.id,
              ours: null,
              theirs,
              detail: `Stripe captured ${charge.amount_captured} ${charge.currency} (PaymentIntent ${intent ?? "none"}) for no order of ours`,
            });
          } else if (!payment || payment.amountCaptured <= 0) {
            found.push({
              kind: "capture_not_recorded",
              orderId: order.id,
              reference: charge.id,
              ours: { status: order.status, captured: payment?.amountCaptured ?? 0 },
              theirs,
              detail: `Stripe captured ${charge.amount_captured} ${charge.currency}; the order (${order.status}) has no capture recorded`,
            });
          } else {
            sum.ours.captured += payment.amountCaptured;
            if (
              payment.amountCaptured !== charge.amount_captured ||
              payment.currency.toLowerCase() !== charge.currency.toLowerCase()
            ) {
              found.push({
                kind: "capture_differs",
                orderId: order.id,
                reference: charge.id,
                ours: { amount: payment.amountCaptured, currency: payment.currency.toLowerCase() },
                theirs,
                detail: `We recorded ${payment.amountCaptured} ${payment.currency.toLowerCase()} captured, Stripe ${charge.amount_captured} ${charge.currency}`,
              });
            }
            await compareBreakdown(order, charge.id, found);
          }
        } else if (source.object === "refund") {
          sum.stripe.refunds += transaction.amount;
          const refund = source as Stripe.Refund;
          seenRefunds.add(refund.id);
          if (refund.status === "failed" || refund.status === "canceled") continue;
          const intent = idOf(refund.payment_intent);
          const order = intent ? ours.orderByIntent.get(intent) : undefined;
          const recorded = ours.refundById.get(refund.id);
          const theirs = { refund: refund.id, amount: refund.amount, currency: refund.currency };
          if (recorded) {
            sum.ours.refunded += recorded.status === "succeeded" ? recorded.amount : 0;
            if (recorded.amount !== refund.amount || recorded.status === "failed") {
              found.push({
                kind: "refund_differs",
                orderId: recorded.orderId,
                reference: refund.id,
                ours: { amount: recorded.amount, currency: recorded.currency, status: recorded.status },
                theirs: { ...theirs, status: refund.status },
                detail: `We recorded ${recorded.amount} ${recorded.currency} (${recorded.status}), Stripe refunded ${refund.amount} ${refund.currency}`,
              });
            }
          } else if (ours.timelineRefunds.has(refund.id) || ours.exchangeByRefund.has(refund.id)) {
            // The fulfilment's own refunds, and an exchange charge's refund (its undo): in full.
            sum.ours.refunded += refund.amount;
          } else {
            const payment = intent ? ours.paymentByIntent.get(intent) : undefined;
            found.push({
              kind: "refund_not_recorded",
              orderId: order?.id ?? null,
              reference: refund.id,
              ours: order ? { refunded: payment?.amountRefunded ?? 0, status: order.status } : null,
              theirs,
              detail: `Stripe refunded ${refund.amount} ${refund.currency}; we have no record of this refund`,
            });
          }
        } else if (source.object === "dispute") {
          sum.stripe.disputes += transaction.amount;
        }
      }
    }

    // The reverse: every refund we recorded as made in the day is at Stripe.
    let cursor: string | undefined;
    for (;;) {
      const batch = await db.refund.findMany({
        where: { status: "succeeded", providerId: { not: null }, createdAt: { gte: day.start, lt: day.end } },
        orderBy: { id: "asc" },
        take: 500,
        ...(cursor ? { cursor: { id: cursor }, skip: 1 } : {}),
      });
      for (const refund of batch) {
        const providerId = refund.providerId as string;
        if (seenRefunds.has(providerId)) continue;
        // Not in the day's ledger: at Stripe on another day (a boundary), or not at Stripe at all.
        if (await deps.stripe.refund(providerId)) continue;
        found.push({
          kind: "refund_not_at_stripe",
          orderId: refund.orderId,
          reference: providerId,
          ours: { refund: refund.id, amount: refund.amount, currency: refund.currency },
          theirs: null,
          detail: `We recorded a refund of ${refund.amount} ${refund.currency} that Stripe does not have`,
        });
      }
      if (batch.length < 500) break;
      cursor = batch.at(-1)?.id;
    }

    await disputesStripeLacks(day, found);
    for await (const dispute of deps.stripe.openDisputes(day.end)) {
      const intent = idOf(dispute.payment_intent);
      const order = intent
        ? await db.order.findFirst({
            where: { OR: [{ paymentIntentId: intent }, { payment: { providerId: intent } }] },
            select: { id: true, status: true },
          })
        : null;
      found.push({
        kind: "dispute_open",
        orderId: order?.id ?? null,
        reference: dispute.id,
        ours: order ? { status: order.status } : null,
        theirs: {
          dispute: dispute.id,
          amount: dispute.amount,
          currency: dispute.currency,
          reason: dispute.reason,
          status: dispute.status,
          evidenceDueBy: dispute.evidence_details?.due_by
            ? new Date(dispute.evidence_details.due_by * 1000).toISOString()
            : null,
        },
        detail: `Dispute (${dispute.reason}) ${dispute.status}: ${dispute.amount} ${dispute.currency}`,
      });
    }
    return { totals, count };
  }

  async function reconcileCarrier(carrier: CarrierLedger, day: ShopDay, found: Mismatch[]) {
    // Labels handed back in the day, by tracking number, from every path: each must come back refunded.
    const voids = await labelVoidsOfDay(db, day);
    const reportedVoids = new Set<string>();
    const checkVoid = (shipment: CarrierShipment | null, handedBack: LabelVoid) => {
      if (shipment && refundedByCarrier.has(shipment.refundStatus ?? "")) return;
      // Billed on scan (`not_applicable`): nothing to refund while the carrier has charged nothing.
      if (shipment?.refundStatus === "not_applicable" && !shipment.postageCharged) return;
      // The same label may be found by the day's pages, the day's hand-backs and the earlier ones.
      const key = shipment?.id ?? handedBack.lookup;
      if (reportedVoids.has(key)) return;
      reportedVoids.add(key);
      // Neither side knows of a refund: the carrier has no such label and we never heard it refused.
      if (!shipment && handedBack.ourStatus !== "rejected") return;
      found.push({
        kind: "void_not_refunded",
        orderId: handedBack.orderId,
        reference: shipment?.id ?? handedBack.lookup,
        ours: {
          voided: true,
          trackingNumber: handedBack.trackingNumber,
          via: handedBack.via,
          refundStatus: handedBack.ourStatus,
        },
        theirs: shipment
          ? {
              shipment: shipment.id,
              refundStatus: shipment.refundStatus,
              rate: shipment.rate,
              postageCharged: shipment.postageCharged,
            }
          : null,
        detail: `We handed back label ${handedBack.trackingNumber} (${handedBack.via}); the carrier's refund status is ${shipment ? (shipment.refundStatus ?? "none") : `unknown, ours ${handedBack.ourStatus ?? "none"}`}`,
      });
    };

    let count = 0;
    for await (const page of carrier.shipmentPages(day)) {
      count += page.length;
      const ids = page.map((shipment) => shipment.id);
      const codes = page.flatMap((shipment) => (shipment.trackingCode ? [shipment.trackingCode] : []));
      const ours = await db.shipment.findMany({
        where: { OR: [{ providerId: { in: ids } }, { trackingNumber: { in: codes } }] },
        select: { providerId: true, trackingNumber: true },
      });
      // Return labels (src/returns) are ours too: bought for a return, kept in its own row.
      const returnLabels = await db.return.findMany({
        where: { OR: [{ labelProviderId: { in: ids } }, { labelTrackingNumber: { in: codes } }] },
        select: { labelProviderId: true, labelTrackingNumber: true },
      });
      const known = new Set(
        [
          ...ours.flatMap((s) => [s.providerId, s.trackingNumber]),
          ...returnLabels.flatMap((r) => [r.labelProviderId, r.labelTrackingNumber]),
        ].filter(Boolean),
      );
      for (const shipment of page) {
        const voidedBy = shipment.trackingCode ? voids.get(shipment.trackingCode) : undefined;
        if (voidedBy && shipment.trackingCode) {
          voids.delete(shipment.trackingCode);
          checkVoid(shipment, voidedBy);
          continue;
        }
        if (known.has(shipment.id) || (shipment.trackingCode && known.has(shipment.trackingCode))) continue;
        // A refunded label cost nothing: not an orphan.
        if (refundedByCarrier.has(shipment.refundStatus ?? "")) continue;
        // order-<id>, or order-<id>-<parcel>[-reship-<n>] for an order's other parcels and re-ships.
        const referenced = /^order-([0-9a-fA-F-]{36})(?:-\d+(?:-reship-\d+)?)?$/.exec(
          shipment.reference ?? "",
        )?.[1];
        found.push({
          kind: "label_without_shipment",
          orderId: referenced && uuidPattern.test(referenced) ? referenced.toLowerCase() : null,
          reference: shipment.id,
          ours: null,
          theirs: {
            shipment: shipment.id,
            trackingCode: shipment.trackingCode,
            reference: shipment.reference,
            rate: shipment.rate,
          },
          detail: `The carrier charged ${shipment.rate ? `${shipment.rate.amount} ${shipment.rate.currency}` : "for a label"} (${shipment.trackingCode ?? shipment.id}) that belongs to no shipment of ours`,
        });
      }
    }
    // Voids of labels bought on another day: asked of the carrier one by one (there are few).
    for (const handedBack of voids.values()) checkVoid(await carrier.shipment(handedBack.lookup), handedBack);
    // Label refunds handed back on an earlier day that the carrier decided against since (EasyPost
    // answers `submitted` and decides days later; a return label's refund is followed by nothing
    // else): reported on every day's run until the carrier refunds the label after all (a refund
    // submitted again and accepted). A label billed on scan (`not_applicable`) counts once the
    // carrier charges it (scanned after it was handed back). Asked of the carrier one by one:
    // there are few.
    const earlier: LabelVoid[] = [
      ...(
        await db.shipment.findMany({
          where: { labelRefundStatus: { in: ["rejected", "not_applicable"] } },
          select: { orderId: true, trackingNumber: true, providerId: true, labelRefundStatus: true },
          take: 500,
        })
      ).map((row) => ({
        orderId: row.orderId,
        trackingNumber: row.trackingNumber,
        lookup: row.providerId ?? row.trackingNumber,
        via: "label-refund-requested",
        ourStatus: row.labelRefundStatus,
      })),
      ...(
        await db.return.findMany({
          where: {
            labelRefundStatus: { in: ["submitted", "rejected", "not_applicable"] },
            labelProviderId: { not: null },
          },
          select: {
            id: true,
            orderId: true,
            labelTrackingNumber: true,
            labelProviderId: true,
            labelRefundStatus: true,
          },
          take: 500,
        })
      ).map((row) => ({
        orderId: row.orderId,
        trackingNumber: row.labelTrackingNumber ?? `return-${row.id}`,
        lookup: row.labelProviderId ?? `return-${row.id}`,
        via: "return-label-refund-requested",
        ourStatus: row.labelRefundStatus,
      })),
    ];
    for (const handedBack of earlier) {
      if (voids.has(handedBack.trackingNumber)) continue;
      const shipment = await carrier.shipment(handedBack.lookup);
      const lost =
        shipment?.refundStatus === "rejected" ||
        (shipment?.refundStatus === "not_applicable" && shipment.postageCharged);
      if (shipment && lost) checkVoid(shipment, handedBack);
    }
    return count;
  }

  /**
   * Every dispute we hold as open, or recorded in the day, is Stripe's: a webhook signed with our
   * secret but naming a dispute Stripe never opened (a leaked secret, a test event sent to
   * production) would otherwise hold the order and stop its refunds for good.
   */
  async function disputesStripeLacks(day: ShopDay, found: Mismatch[]) {
    const ours = await db.dispute.findMany({
      where: {
        OR: [
          { status: { notIn: ["won", "lost", "warning_closed", "prevented", "charge_refunded"] } },
          { createdAt: { gte: day.start, lt: day.end } },
        ],
        createdAt: { lt: day.end },
      },
      orderBy: { createdAt: "asc" },
      take: 1_000,
    });
    for (const dispute of ours) {
      if (await deps.stripe.dispute(dispute.providerId)) continue;
      found.push({
        kind: "dispute_not_at_stripe",
        orderId: dispute.orderId,
        reference: dispute.providerId,
        ours: { status: dispute.status, amount: dispute.amount, currency: dispute.currency.trim() },
        theirs: null,
        detail: `We recorded dispute ${dispute.providerId} (${dispute.status}, ${dispute.amount} ${dispute.currency.trim()}) that Stripe does not have`,
      });
    }
  }

  async function unshipped(day: ShopDay, found: Mismatch[]) {
    const placedBefore = new Date(day.end.getTime() - deps.shipWithinMs);
    const orders = await db.order.findMany({
      where: {
        status: { in: ["paid", "fulfilling"] },
        shipments: { none: {} },
        createdAt: { lt: placedBefore },
        lines: { some: { product: { digital: false } } },
      },
      select: { id: true, status: true, createdAt: true },
      orderBy: { createdAt: "asc" },
      take: 1_000,
    });
    for (const order of orders) {
      found.push({
        kind: "not_shipped_in_time",
        orderId: order.id,
        reference: order.id,
        ours: { status: order.status, placedAt: order.createdAt.toISOString() },
        theirs: null,
        detail: `Paid and not shipped since ${order.createdAt.toISOString()}`,
      });
    }
  }

  async function stockLedger(found: Mismatch[]) {
    if (!deps.stockLedger) return;
    for (const product of await deps.stockLedger.mismatches()) {
      found.push({
        kind: "stock_ledger_differs",
        orderId: null,
        reference: product.sku,
        ours: { stockOnHand: product.stockOnHand },
        theirs: { ledgerSum: product.ledgerSum },
        detail: `${product.sku} has ${product.stockOnHand} on hand, its stock movements sum to ${product.ledgerSum}: stock was changed without its ledger row`,
      });
    }
  }

  const linkOf = (mismatch: { kind: string; orderId: string | null; reference: string }): string =>
    mismatch.orderId
      ? deps.orderUrl(mismatch.orderId)
      : mismatch.kind === "stock_ledger_differs"
        ? (deps.productUrl?.(mismatch.reference) ?? "")
        : (stripeDashboardUrl(mismatch.reference, deps.stripe.livemode ?? false) ?? "");

  type RunRow = NonNullable<Awaited<ReturnType<typeof db.reconciliationRun.findUnique>>>;
  const summaryOf = (row: RunRow): ReconciliationSummary => ({
    id: row.id,
    date: row.day,
    timeZone: row.timeZone,
    ranBy: row.ranBy,
    startedAt: row.startedAt.toISOString(),
    finishedAt: row.finishedAt.toISOString(),
    stripeTransactions: row.stripeTransactions,
    carrierShipments: row.carrierShipments,
    totals: row.totals as unknown as Record<string, CurrencyTotals>,
    counts: row.counts as unknown as Partial<Record<MismatchKind, number>>,
    mismatchCount: row.mismatchCount,
    reportUrl: deps.reportUrl(row.id),
  });

  async function load(where: { id: string } | { day: string }): Promise<ReconciliationReport | null> {
    const row = await db.reconciliationRun.findUnique({
      where,
      include: { mismatches: { orderBy: { id: "asc" } } },
    });
    if (!row) return null;
    return {
      ...summaryOf(row),
      mismatches: row.mismatches.map((m) => ({
        kind: m.kind as MismatchKind,
        orderId: m.orderId,
        reference: m.reference,
        ours: m.ours,
        theirs: m.theirs,
        detail: m.detail,
        link: linkOf(m),
      })),
    };
  }

  return {
    timeZone: deps.timeZone,

    async run({ date, by }) {
      const day = shopDay(date === undefined ? dateIn(now(), deps.timeZone) : date, deps.timeZone);
      const startedAt = now();
      const found: Mismatch[] = [];
      const stripe = await reconcileStripe(day, found);
      const carrierShipments = deps.carrier ? await reconcileCarrier(deps.carrier, day, found) : 0;
      await unshipped(day, found);
      await stockLedger(found);
      const counts: Partial<Record<MismatchKind, number>> = {};
      for (const mismatch of found) counts[mismatch.kind] = (counts[mismatch.kind] ?? 0) + 1;
      const fields = {
        timeZone: day.timeZone,
        ranBy: by,
        startedAt,
        finishedAt: now(),
        totals: stripe.totals as object,
        counts,
        mismatchCount: found.length,
        stripeTransactions: stripe.count,
        carrierShipments,
      };
      // One report per day: a re-run keeps the report's id (links in Slack stay good) and
      // replaces its contents, in one transaction, so a reader never sees half of either.
      const runId = await db.$transaction(async (tx) => {
        const saved = await tx.reconciliationRun.upsert({
          where: { day: day.date },
          create: { day: day.date, ...fields },
          update: fields,
          select: { id: true },
        });
        await tx.reconciliationMismatch.deleteMany({ where: { runId: saved.id } });
        if (found.length > 0) {
          await tx.reconciliationMismatch.createMany({
            data: found.map((m) => ({
              runId: saved.id,
              kind: m.kind,
              orderId: m.orderId,
              reference: m.reference,
              ours: (m.ours ?? undefined) as object | undefined,
              theirs: (m.theirs ?? undefined) as object | undefined,
              detail: m.detail,
            })),
          });
        }
        return saved.id;
      });
      const report = (await load({ id: runId })) as ReconciliationReport;
      logger.info(
        {
          date: day.date,
          by,
          mismatches: found.length,
          counts,
          transactions: stripe.count,
          carrierShipments,
        },
        "reconciliation finished",
      );
      if (found.length > 0) {
        // Keyed by the day and what is wrong: the hourly run finding the same mismatches says nothing new.
        const about = createHash("sha256")
          .update(
            found
              .map((m) => `${m.kind}:${m.reference}`)
              .sort()
              .join("\n"),
          )
          .digest("hex")
          .slice(0, 16);
        await deps.alerts.notify({
          key: `reconciliation-${day.date}-${about}`,
          title: `Reconciliation of ${day.date}: ${found.length} mismatch${found.length === 1 ? "" : "es"}`,
          fields: {
            day: day.date,
            mismatches: found.length,
            ...counts,
            orders: new Set(found.flatMap((m) => (m.orderId ? [m.orderId] : []))).size,
            report: report.reportUrl,
            action: "Open the report; each row links the order or the Stripe object",
          },
        });
      }
      return report;
    },

    async find(id) {
      const parsed = z.uuid().safeParse(id);
      const report = parsed.success ? await load({ id: parsed.data }) : null;
      if (!report) throw new AppError("not_found", `Reconciliation run ${String(id)} does not exist`);
      return report;
    },

    async list({ date }) {
      if (date !== undefined && date !== "") {
        const day = shopDay(date, deps.timeZone);
        const row = await db.reconciliationRun.findUnique({ where: { day: day.date } });
        return row ? [summaryOf(row)] : [];
      }
      const rows = await db.reconciliationRun.findMany({ orderBy: { day: "desc" }, take: 31 });
      return rows.map(summaryOf);
    },
  };
}
