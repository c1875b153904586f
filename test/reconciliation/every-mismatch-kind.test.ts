import { randomUUID } from "node:crypto";
import type Stripe from "stripe";
import type { OpsNotice } from "../../src/alerts";
import { createLogger } from "../../src/logger";
import {
  createReconciliation,
  mismatchKinds,
  type MismatchKind,
  type ReconciliationReport,
} from "../../src/reconciliation";
import type { CarrierLedger, CarrierShipment } from "../../src/reconciliation/carrier-ledger";
import type { StripeLedger } from "../../src/reconciliation/stripe-ledger";
import type { TimelineKind } from "../../src/timeline/kinds";
import { createTestDatabase, type TestDatabase } from "../support/database";

jest.setTimeout(60_000);

const day = "2026-03-10";
const noon = new Date(`${day}T12:00:00.000Z`);

/**
 * One planted case for every mismatch kind the reconciliation knows, each beside a twin that
 * must not be reported (the same shape with both sides agreeing), against a real database and
 * the two ledgers as Stripe and EasyPost would answer. Label voids come from every path that
 * hands a label back (the run's own void, a cancel, a full refund, a re-ship, a rejected return)
 * and a label whose refund the carrier rejected is reported, whichever path voided it.
 */
describe("the reconciliation reports every kind of mismatch", () => {
  let database: TestDatabase;
  const alerts: OpsNotice[] = [];
  const transactions: Stripe.BalanceTransaction[] = [];
  const stripeRefunds = new Map<string, Stripe.Refund>();
  const stripeDisputes = new Map<string, Stripe.Dispute>();
  const openDisputes: Stripe.Dispute[] = [];
  const carrierShipments: CarrierShipment[] = [];
  const carrierByLookup = new Map<string, CarrierShipment>();
  const stockMismatches: { sku: string; stockOnHand: number; ledgerSum: number }[] = [];
  const stripeSessions = new Map<string, Stripe.Checkout.Session>();
  /** A Checkout Session of one REC-1 line, expanded as the ledger reads it, with `tax` on the line. */
  const sessionAt = (id: string, tax: number) =>
    stripeSessions.set(id, {
      id,
      currency: "usd",
      amount_subtotal: 5000,
      amount_total: 5000 + tax,
      total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: tax },
      shipping_cost: null,
      line_items: {
        object: "list",
        has_more: false,
        data: [
          {
            quantity: 5,
            amount_subtotal: 5000,
            amount_discount: 0,
            amount_tax: tax,
            amount_total: 5000 + tax,
            price: { product: { id: "prod_rec", metadata: { sku: "REC-1" } } },
          },
        ],
      },
    } as unknown as Stripe.Checkout.Session);
  /** The breakdown the intake recorded for such a session. */
  const recordedAt = (tax: number) => ({
    currency: "usd",
    subtotal: 5000,
    shipping: 0,
    discount: 0,
    tax,
    total: 5000 + tax,
    shippingRate: null,
    lines: [
      {
        sku: "REC-1",
        quantity: 5,
        amountSubtotal: 5000,
        amountDiscount: 0,
        amountTax: tax,
        amountTotal: 5000 + tax,
      },
    ],
  });

  const stripe: StripeLedger = {
    async *transactionPages() {
      yield transactions;
    },
    refund: async (id) => stripeRefunds.get(id) ?? null,
    checkoutSession: async (id) => stripeSessions.get(id) ?? null,
    dispute: async (id) => stripeDisputes.get(id) ?? null,
    async *openDisputes() {
      yield* openDisputes;
    },
  };
  const carrier: CarrierLedger = {
    name: "easypost",
    async *shipmentPages() {
      yield carrierShipments;
    },
    shipment: async (lookup) => carrierByLookup.get(lookup) ?? null,
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.db.product.create({
      data: { sku: "REC-1", name: "Rec", unitPrice: 1000, currency: "usd", stockOnHand: 10 },
    });
  });
  afterAll(() => database.drop());

  const reconciliation = () =>
    createReconciliation({
      db: database.db,
      stripe,
      carrier,
      alerts: { notify: async (notice) => void alerts.push(notice) },
      logger: createLogger({ level: "silent" }),
      timeZone: "UTC",
      shipWithinMs: 2 * 86_400_000,
      stockLedger: { mismatches: async () => stockMismatches },
      reportUrl: (id) => `http://shop.test/ops/reconciliation/${id}`,
      orderUrl: (id) => `http://shop.test/ops/orders/${id}`,
      productUrl: (sku) => `http://shop.test/ops/products/${sku}`,
      now: () => noon,
    });

  async function order(options: { intent?: string; captured?: number; createdAt?: Date; status?: string }) {
    const created = await database.db.order.create({
      data: {
        customerId: "cus_rec",
        email: "buyer@example.com",
        currency: "usd",
        total: 5000,
        status: (options.status ?? "shipped") as "shipped",
        paymentIntentId: options.intent ?? null,
        shippingAddress: { line1: "1 Main St", city: "Portland", postalCode: "97201", country: "US" },
        lines: { create: [{ sku: "REC-1", name: "Rec", unitPrice: 1000, quantity: 5 }] },
        ...(options.createdAt ? { createdAt: options.createdAt } : {}),
      },
    });
    if (options.intent && options.captured !== undefined)
      await database.db.payment.create({
        data: {
          orderId: created.id,
          providerId: options.intent,
          status: "captured",
          currency: "usd",
          amountAuthorized: 5000,
          amountCaptured: options.captured,
        },
      });
    return created.id;
  }

  const charge = (intent: string, amount: number) => {
    transactions.push({
      id: `txn_${randomUUID()}`,
      amount,
      fee: 0,
      net: amount,
      currency: "usd",
      source: {
        object: "charge",
        id: `ch_${intent}`,
        payment_intent: intent,
        amount_captured: amount,
        currency: "usd",
      },
    } as unknown as Stripe.BalanceTransaction);
  };
  const refundAtStripe = (id: string, intent: string, amount: number) => {
    const refund = {
      object: "refund",
      id,
      payment_intent: intent,
      amount,
      currency: "usd",
      status: "succeeded",
    };
    stripeRefunds.set(id, refund as Stripe.Refund);
    transactions.push({
      id: `txn_${id}`,
      amount: -amount,
      fee: 0,
      net: -amount,
      currency: "usd",
      source: refund,
    } as unknown as Stripe.BalanceTransaction);
  };
  const recordRefund = (orderId: string, providerId: string, amount: number) =>
    database.db.refund.create({
      data: { orderId, providerId, amount, currency: "usd", status: "succeeded", createdAt: noon },
    });
  const entry = (orderId: string, kind: TimelineKind, detail: object) =>
    database.db.orderTimelineEntry.create({ data: { orderId, kind, detail, createdAt: noon } });
  const carrierLabel = (label: Partial<CarrierShipment> & { id: string }, lookups: string[] = []) => {
    const shipment: CarrierShipment = {
      reference: null,
      trackingCode: null,
      rate: { amount: "7.50", currency: "USD" },
      refundStatus: null,
      postageCharged: true,
      createdAt: noon.toISOString(),
      ...label,
    };
    for (const lookup of [shipment.id, ...lookups]) carrierByLookup.set(lookup, shipment);
    return shipment;
  };
  async function parcel(orderId: string, trackingNumber: string, providerId: string, generation = 0) {
    await database.db.shipment.create({
      data: {
        orderId,
        carrier: "USPS",
        trackingNumber,
        trackingUrl: `https://track.test/${trackingNumber}`,
        providerId,
        generation,
        labelRefundStatus: "submitted",
      },
    });
  }

  // Each test runs the day itself (not beforeAll): a mutation run switches its mutant on per test
  // and runs only the tests that reached the mutated code, so each must reach it. A re-run of the
  // day replaces its report.
  const theReport = (): Promise<ReconciliationReport> => reconciliation().run({ date: day, by: "cli" });
  const planted = new Map<MismatchKind, string[]>();
  const plant = (kind: MismatchKind, reference: string) =>
    planted.set(kind, [...(planted.get(kind) ?? []), reference]);

  beforeAll(async () => {
    // charge_without_order: a capture no order knows; its twin is an order's own.
    charge("pi_nobody", 3000);
    plant("charge_without_order", "ch_pi_nobody");
    await order({ intent: "pi_fine", captured: 5000 });
    charge("pi_fine", 5000);

    // capture_not_recorded: Stripe captured, the order has no capture.
    await order({ intent: "pi_unrecorded" });
    charge("pi_unrecorded", 5000);
    plant("capture_not_recorded", "ch_pi_unrecorded");

    // capture_differs: we recorded 5000, Stripe 4000.
    const differs = await order({ intent: "pi_differs", captured: 5000 });
    charge("pi_differs", 4000);
    plant("capture_differs", "ch_pi_differs");

    // refund_not_recorded: a Dashboard refund whose webhook was lost.
    refundAtStripe("re_dashboard", "pi_fine", 700);
    plant("refund_not_recorded", "re_dashboard");

    // refund_differs: we recorded 1000, Stripe refunded 1200; the twin agrees.
    await recordRefund(differs, "re_amount", 1000);
    refundAtStripe("re_amount", "pi_differs", 1200);
    plant("refund_differs", "re_amount");
    await recordRefund(differs, "re_same", 300);
    refundAtStripe("re_same", "pi_differs", 300);

    // refund_not_at_stripe: recorded as made, Stripe has none; the twin is at Stripe another day.
    await recordRefund(differs, "re_ghost", 200);
    plant("refund_not_at_stripe", "re_ghost");
    await recordRefund(differs, "re_yesterday", 100);
    stripeRefunds.set("re_yesterday", { id: "re_yesterday", amount: 100 } as Stripe.Refund);

    // label_without_shipment: the carrier charged for a label no shipment of ours holds.
    carrierShipments.push(
      carrierLabel({ id: "shp_orphan", trackingCode: "TRK-ORPHAN", reference: "nothing" }),
    );
    plant("label_without_shipment", "shp_orphan");

    // void_not_refunded, from every path that hands a label back; the carrier rejected each
    // planted one, and refunds (or has submitted) each twin.
    const voids = await order({ intent: "pi_voids", captured: 5000 });
    const paths: { via: TimelineKind; refundStatus: string; detail?: object }[] = [
      { via: "label-refund-requested", refundStatus: "rejected", detail: { cause: "cancelled" } },
      { via: "label-refund-requested", refundStatus: "refunded", detail: { cause: "refunded" } },
      { via: "label-refund-requested", refundStatus: "rejected", detail: { cause: "reshipped" } },
      { via: "label-refund-requested", refundStatus: "submitted", detail: { cause: "reshipped" } },
      { via: "label-refund-rejected", refundStatus: "rejected", detail: { why: "rejected" } },
    ];
    for (const [index, path] of paths.entries()) {
      const trackingNumber = `TRK-VOID-${index}`;
      await parcel(voids, trackingNumber, `shp_void_${index}`, index);
      await entry(voids, path.via, { ...path.detail, trackingNumber, parcelNumber: 1 });
      // Bought on another day: the carrier is asked about the label by its id.
      carrierLabel({
        id: `shp_void_${index}`,
        trackingCode: trackingNumber,
        refundStatus: path.refundStatus,
      });
      if (path.refundStatus === "rejected") plant("void_not_refunded", `shp_void_${index}`);
    }
    // The run's own void of a parcel booked after a cancel: never recorded, found by its reference
    // (an entry from before orders had several parcels names none: parcel 1).
    const lateBooked = await order({ intent: "pi_late", captured: 5000, status: "cancelled" });
    await entry(lateBooked, "shipment-voided", { trackingNumber: "TRK-LATE", outcome: "voided" });
    carrierLabel({ id: "shp_late", trackingCode: "TRK-LATE", refundStatus: "rejected" }, [
      `order-${lateBooked}`,
    ]);
    plant("void_not_refunded", "shp_late");
    // A rejected return's label handed back; the carrier refused the refund.
    const returned = await database.db.return.create({
      data: {
        orderId: voids,
        reason: "other",
        requestedBy: "admin-api",
        status: "rejected",
        labelTrackingNumber: "TRK-RETURN",
        labelProviderId: "shp_return",
        labelRefundStatus: "submitted",
      },
    });
    await entry(voids, "return-label-refund-requested", { returnId: returned.id, status: "submitted" });
    carrierShipments.push(
      carrierLabel({
        id: "shp_return",
        trackingCode: "TRK-RETURN",
        refundStatus: "rejected",
        reference: `return-${returned.id}`,
      }),
    );
    plant("void_not_refunded", "shp_return");
    // A return label kept without the carrier's id, bought another day: asked by its reference.
    const unnamed = await database.db.return.create({
      data: {
        orderId: voids,
        reason: "other",
        requestedBy: "admin-api",
        status: "closed",
        labelTrackingNumber: "TRK-RETURN-2",
        labelRefundStatus: "submitted",
      },
    });
    await entry(voids, "return-label-refund-requested", { returnId: unnamed.id, status: "submitted" });
    carrierLabel({ id: "shp_return_2", trackingCode: "TRK-RETURN-2", refundStatus: "rejected" }, [
      `return-${unnamed.id}`,
    ]);
    plant("void_not_refunded", "shp_return_2");
    // Twins that are no void of the day, each with a label the carrier refused to refund: a label
    // scanned before it could be voided (ops told, nothing handed back), the run's void the carrier
    // would not take, a return label the carrier no longer had, and a void of the day before.
    const twins: { kind: TimelineKind; detail: object; createdAt?: Date }[] = [
      { kind: "label-not-voided", detail: { trackingNumber: "TRK-TWIN-0", why: "scanned" } },
      { kind: "shipment-voided", detail: { trackingNumber: "TRK-TWIN-1", outcome: "not-voidable" } },
      {
        kind: "label-refund-requested",
        detail: { trackingNumber: "TRK-TWIN-2", cause: "cancelled" },
        createdAt: new Date(noon.getTime() - 86_400_000),
      },
    ];
    for (const [index, twin] of twins.entries()) {
      await parcel(voids, `TRK-TWIN-${index}`, `shp_twin_${index}`, 10 + index);
      await database.db.orderTimelineEntry.create({
        data: { orderId: voids, kind: twin.kind, detail: twin.detail, createdAt: twin.createdAt ?? noon },
      });
      carrierLabel({ id: `shp_twin_${index}`, trackingCode: `TRK-TWIN-${index}`, refundStatus: "rejected" });
    }
    const gone = await database.db.return.create({
      data: {
        orderId: voids,
        reason: "other",
        requestedBy: "admin-api",
        status: "rejected",
        labelTrackingNumber: "TRK-TWIN-GONE",
        labelProviderId: "shp_twin_gone",
      },
    });
    await entry(voids, "return-label-refund-requested", { returnId: gone.id, status: "not-found" });
    carrierLabel({ id: "shp_twin_gone", trackingCode: "TRK-TWIN-GONE", refundStatus: "rejected" });

    // not_shipped_in_time: paid three days ago, nothing shipped; the twin was paid this morning.
    const late = await order({ status: "paid", createdAt: new Date(noon.getTime() - 3 * 86_400_000) });
    plant("not_shipped_in_time", late);
    await order({ status: "paid", createdAt: new Date(noon.getTime() - 3_600_000) });

    // dispute_open: open at Stripe.
    const disputed = await order({ intent: "pi_disputed", captured: 5000 });
    const open = {
      id: "dp_open",
      payment_intent: "pi_disputed",
      amount: 5000,
      currency: "usd",
      reason: "fraudulent",
      status: "needs_response",
      evidence_details: { due_by: null },
    } as unknown as Stripe.Dispute;
    openDisputes.push(open);
    stripeDisputes.set("dp_open", open);
    await database.db.dispute.create({
      data: {
        orderId: disputed,
        providerId: "dp_open",
        status: "needs_response",
        amount: 5000,
        currency: "usd",
        reason: "fraudulent",
        eventCreatedAt: noon,
      },
    });
    plant("dispute_open", "dp_open");

    // dispute_not_at_stripe: a dispute we recorded that Stripe never opened.
    await database.db.dispute.create({
      data: {
        orderId: disputed,
        providerId: "dp_forged",
        status: "needs_response",
        amount: 5000,
        currency: "usd",
        reason: "fraudulent",
        eventCreatedAt: noon,
        createdAt: noon,
      },
    });
    plant("dispute_not_at_stripe", "dp_forged");

    // stock_ledger_differs.
    stockMismatches.push({ sku: "REC-1", stockOnHand: 12, ledgerSum: 10 });
    plant("stock_ledger_differs", "REC-1");

    // breakdown_differs: we recorded 400 of tax, Stripe's session says 410; the twin agrees.
    const taxed = await order({ intent: "pi_taxed", captured: 5400 });
    await database.db.order.update({
      where: { id: taxed },
      data: { checkoutSessionId: "cs_taxed", moneyBreakdown: recordedAt(400) },
    });
    sessionAt("cs_taxed", 410);
    charge("pi_taxed", 5400);
    plant("breakdown_differs", "ch_pi_taxed");
    const agreed = await order({ intent: "pi_taxed_twin", captured: 5400 });
    await database.db.order.update({
      where: { id: agreed },
      data: { checkoutSessionId: "cs_taxed_twin", moneyBreakdown: recordedAt(400) },
    });
    sessionAt("cs_taxed_twin", 400);
    charge("pi_taxed_twin", 5400);
  });

  it("plants a case of every kind there is", () => {
    expect([...planted.keys()].sort()).toEqual([...mismatchKinds].sort());
  });

  it.each([...mismatchKinds])("%s: exactly the planted rows, nothing of their twins", async (kind) => {
    const report = await theReport();
    const found = report.mismatches.filter((mismatch) => mismatch.kind === kind).map((m) => m.reference);
    expect(found.sort()).toEqual([...(planted.get(kind) ?? [])].sort());
    expect(report.counts[kind]).toBe(planted.get(kind)?.length);
  });

  it("says what differs: the refund's two amounts, the void's path and the carrier's answer", async () => {
    const report = await theReport();
    const refund = report.mismatches.find((m) => m.kind === "refund_differs");
    expect(refund).toMatchObject({ ours: { amount: 1000 }, theirs: { amount: 1200 } });
    const returnVoid = report.mismatches.find((m) => m.reference === "shp_return");
    expect(returnVoid).toMatchObject({
      ours: { via: "return-label-refund-requested", trackingNumber: "TRK-RETURN", refundStatus: "submitted" },
      theirs: { refundStatus: "rejected" },
    });
    expect(report.mismatchCount).toBe([...planted.values()].flat().length);
  });

  it("tells ops under one key per set of mismatches, however often the day is run again", async () => {
    const before = alerts.length;
    const report = await theReport();
    const again = await theReport();
    expect(again.mismatchCount).toBe(report.mismatchCount);
    const keys = new Set(alerts.slice(before).map((alert) => alert.key));
    expect(alerts.length - before).toBe(2);
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(new RegExp(`^reconciliation-${day}-[0-9a-f]{16}$`));
    // Another set of mismatches is another alert.
    stockMismatches.push({ sku: "REC-2", stockOnHand: 1, ledgerSum: 0 });
    await theReport();
    stockMismatches.pop();
    expect(new Set(alerts.slice(before).map((alert) => alert.key)).size).toBe(2);
  });
});
