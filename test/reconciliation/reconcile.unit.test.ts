import { randomUUID } from "node:crypto";
import type Stripe from "stripe";
import type { OpsNotice } from "../../src/alerts";
import { createLogger } from "../../src/logger";
import type { CarrierLedger, CarrierShipment } from "../../src/reconciliation/carrier-ledger";
import {
  createReconciliation,
  type Mismatch,
  type MismatchKind,
  type ReconciliationDeps,
  type ReconciliationReport,
} from "../../src/reconciliation/reconcile";
import type { ShopDay } from "../../src/reconciliation/shop-day";
import type { StripeLedger } from "../../src/reconciliation/stripe-ledger";
import { defined } from "../support/defined";
import { MoneyDb } from "../support/fakes/money-db";
import { stripeKeyIsLive } from "../../src/payments/stripe-client";

/**
 * The reconciliation (src/reconciliation/reconcile.ts) over an in-memory database that answers as
 * Prisma does (test/support/fakes/money-db.ts: `where` filters by what it names only, `select`
 * returns only what it names, `orderBy` and cursors as Prisma's) and in-memory Stripe and carrier
 * ledgers: one planted case per mismatch kind beside a twin that must not be reported, and a decoy
 * order in every test whose rows a lookup that lost its `where` would read. The end-to-end check
 * against PostgreSQL is test/reconciliation/every-mismatch-kind.test.ts.
 */

const date = "2026-12-05";
const at = (time: string) => new Date(`${date}T${time}Z`);
const noon = at("12:00:00");
const dayBefore = new Date(noon.getTime() - 86_400_000);

/** Stripe's side of the day, in memory, and what the reconciliation asked of it. */
class FakeStripeLedger implements StripeLedger {
  /** Unset as a ledger that does not say (the report links test-mode pages); true: a live account. */
  livemode?: boolean;
  /** The day's balance transactions, in pages as Stripe hands them. */
  pages: Stripe.BalanceTransaction[][] = [[]];
  readonly refunds = new Map<string, Stripe.Refund>();
  readonly disputes = new Map<string, Stripe.Dispute>();
  readonly open: Stripe.Dispute[] = [];
  readonly sessions = new Map<string, Stripe.Checkout.Session>();
  readonly days: ShopDay[] = [];
  readonly openUntil: Date[] = [];
  readonly refundsAsked: string[] = [];

  async *transactionPages(day: ShopDay) {
    this.days.push(day);
    for (const page of this.pages) yield page;
  }
  async refund(id: string) {
    this.refundsAsked.push(id);
    return this.refunds.get(id) ?? null;
  }
  async dispute(id: string) {
    return this.disputes.get(id) ?? null;
  }
  async *openDisputes(until: Date) {
    this.openUntil.push(until);
    yield* this.open;
  }
  checkoutSession? = async (id: string) => this.sessions.get(id) ?? null;

  private last = (): Stripe.BalanceTransaction[] => defined(this.pages.at(-1));

  charge(intent: string | null, amount: number, fields: { currency?: string; fee?: number } = {}) {
    const currency = fields.currency ?? "usd";
    const fee = fields.fee ?? 0;
    const id = `ch_${intent ?? randomUUID().slice(0, 8)}`;
    this.last().push({
      id: `txn_${randomUUID()}`,
      amount,
      fee,
      net: amount - fee,
      currency,
      source: { object: "charge", id, payment_intent: intent, amount_captured: amount, currency },
    } as unknown as Stripe.BalanceTransaction);
    return id;
  }

  refundOf(id: string, intent: string | null, amount: number, status = "succeeded") {
    const refund = { object: "refund", id, payment_intent: intent, amount, currency: "usd", status };
    this.refunds.set(id, refund as Stripe.Refund);
    this.last().push({
      id: `txn_${id}`,
      amount: -amount,
      fee: 0,
      net: -amount,
      currency: "usd",
      source: refund,
    } as unknown as Stripe.BalanceTransaction);
  }

  /** A balance transaction whose source is something else (a payout, an adjustment, unexpanded). */
  other(amount: number, source: unknown) {
    this.last().push({
      id: `txn_${randomUUID()}`,
      amount,
      fee: 1,
      net: amount - 1,
      currency: "usd",
      source,
    } as unknown as Stripe.BalanceTransaction);
  }
}

/** The carrier's labels, in memory: the day's pages, and every label by id or reference. */
class FakeCarrier implements CarrierLedger {
  readonly name = "easypost";
  pages: CarrierShipment[][] = [[]];
  readonly byLookup = new Map<string, CarrierShipment>();
  readonly asked: string[] = [];
  async *shipmentPages() {
    for (const page of this.pages) yield page;
  }
  async shipment(lookup: string) {
    this.asked.push(lookup);
    return this.byLookup.get(lookup) ?? null;
  }
  label(fields: Partial<CarrierShipment> & { id: string }, lookups: string[] = [], inDay = true) {
    const shipment: CarrierShipment = {
      reference: null,
      trackingCode: null,
      rate: { amount: "7.50", currency: "USD" },
      refundStatus: null,
      postageCharged: true,
      createdAt: noon.toISOString(),
      ...fields,
    };
    for (const lookup of [shipment.id, ...lookups]) this.byLookup.set(lookup, shipment);
    if (inDay) defined(this.pages.at(-1)).push(shipment);
    return shipment;
  }
}

function world(options: Partial<ReconciliationDeps> & { timeZone?: string } = {}) {
  const db = new MoneyDb();
  // PostgreSQL promises no order without ORDER BY: unordered reads come back in reverse.
  db.unorderedReads = "reversed";
  const stripe = new FakeStripeLedger();
  const carrier = new FakeCarrier();
  const alerts: OpsNotice[] = [];
  const logs: Record<string, unknown>[] = [];
  const stock: { sku: string; stockOnHand: number; ledgerSum: number }[] = [];
  db.insert("product", { sku: "MUG", digital: false });
  db.insert("product", { sku: "EBOOK", digital: true });
  // The decoy: an order with its own payment, refund, dispute, shipment, return and entries, whose
  // rows a lookup that lost its `where` reads.
  const decoy = db.addOrder({ captured: 5000, refunded: 100, createdAt: dayBefore });
  db.insert("refund", {
    orderId: decoy.id,
    providerId: "re_decoy",
    amount: 100,
    currency: "usd",
    status: "succeeded",
    createdAt: dayBefore,
  });
  db.insert("shipment", {
    orderId: decoy.id,
    providerId: "shp_decoy",
    trackingNumber: "TRK-DECOY",
    labelRefundStatus: null,
  });
  const reconciliation = createReconciliation({
    db: db.asDatabase(),
    stripe,
    carrier,
    alerts: { notify: async (notice) => void alerts.push(notice) },
    logger: createLogger({
      level: "info",
      destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
    }),
    timeZone: "UTC",
    shipWithinMs: 2 * 86_400_000,
    stockLedger: { mismatches: async () => stock },
    reportUrl: (id) => `http://shop.test/ops/reconciliation/${id}`,
    orderUrl: (id) => `http://shop.test/ops/orders/${id}`,
    productUrl: (sku) => `http://shop.test/ops/products/${sku}`,
    now: () => noon,
    ...options,
  });
  const run = () => reconciliation.run({ date, by: "cli" });
  const of = (report: ReconciliationReport, kind: MismatchKind) =>
    report.mismatches.filter((m) => m.kind === kind);
  /** An order paid with `intent`, its payment capturing `captured` (none when undefined). */
  const order = (intent: string | null, captured?: number, fields: Record<string, unknown> = {}) => {
    const id = randomUUID();
    db.insert("order", {
      id,
      status: "shipped",
      currency: "usd",
      paymentIntentId: intent,
      checkoutSessionId: null,
      moneyBreakdown: null,
      createdAt: dayBefore,
      ...fields,
    });
    db.insert("orderLine", { orderId: id, sku: "MUG", quantity: 1 });
    if (captured !== undefined)
      db.insert("payment", {
        orderId: id,
        providerId: intent,
        status: "captured",
        currency: "usd",
        amountCaptured: captured,
        amountRefunded: 0,
      });
    return id;
  };
  const recordRefund = (orderId: string, providerId: string | null, amount: number, fields = {}) =>
    db.insert("refund", {
      orderId,
      providerId,
      amount,
      currency: "usd",
      status: "succeeded",
      createdAt: noon,
      ...fields,
    });
  return { db, stripe, carrier, alerts, logs, stock, reconciliation, run, of, order, recordRefund, decoy };
}

const refs = (mismatches: Mismatch[]) => mismatches.map((m) => m.reference).sort();

describe("reconciliation, in memory: the clean day", () => {
  it("finds nothing when both sides agree, tells no one, and keeps the day's totals", async () => {
    const w = world();
    const paid = w.order("pi_paid", 5000);
    w.stripe.charge("pi_paid", 5000, { fee: 175 });
    w.stripe.refundOf("re_paid", "pi_paid", 700);
    w.recordRefund(paid, "re_paid", 700);
    w.db.insert("shipment", { orderId: paid, providerId: "shp_paid", trackingNumber: "TRK-PAID" });
    w.carrier.label({ id: "shp_paid", trackingCode: "TRK-PAID" });
    const report = await w.run();
    expect(report.mismatches).toEqual([]);
    expect(report.mismatchCount).toBe(0);
    expect(report.counts).toEqual({});
    expect(w.alerts).toEqual([]);
    expect(report.stripeTransactions).toBe(2);
    expect(report.carrierShipments).toBe(1);
    expect(report.totals).toEqual({
      usd: {
        stripe: { charges: 5000, refunds: -700, disputes: 0, gross: 4300, fees: 175, net: 4125 },
        ours: { captured: 5000, refunded: 700 },
      },
    });
    expect(report).toMatchObject({
      date,
      timeZone: "UTC",
      ranBy: "cli",
      startedAt: noon.toISOString(),
      finishedAt: noon.toISOString(),
      reportUrl: `http://shop.test/ops/reconciliation/${report.id}`,
    });
  });
});

describe("reconciliation, in memory: Stripe's charges", () => {
  it("charge_without_order: a capture no order knows, with or without a PaymentIntent", async () => {
    const w = world();
    const known = w.order("pi_known", 5000);
    w.stripe.charge("pi_known", 5000);
    const nobody = w.stripe.charge("pi_nobody", 3000);
    const bare = w.stripe.charge(null, 1200);
    const report = await w.run();
    const rows = w.of(report, "charge_without_order");
    expect(refs(rows)).toEqual([bare, nobody].sort());
    expect(rows.find((m) => m.reference === nobody)).toEqual({
      kind: "charge_without_order",
      orderId: null,
      reference: nobody,
      ours: null,
      theirs: { charge: nobody, amount: 3000, currency: "usd" },
      detail: "Stripe captured 3000 usd (PaymentIntent pi_nobody) for no order of ours",
      link: "https://dashboard.stripe.com/test/payments/ch_pi_nobody",
    });
    expect(rows.find((m) => m.reference === bare)?.detail).toContain("(PaymentIntent none)");
    expect(report.mismatches.some((m) => m.orderId === known)).toBe(false);
    expect(report.totals.usd?.stripe.charges).toBe(9200);
    expect(report.totals.usd?.ours.captured).toBe(5000);
  });

  it("a live account's rows without an order link to Stripe's live Dashboard, not its test one", async () => {
    const w = world();
    w.stripe.livemode = true;
    const nobody = w.stripe.charge("pi_nobody", 3000);
    const report = await w.run();
    expect(w.of(report, "charge_without_order").find((m) => m.reference === nobody)?.link).toBe(
      `https://dashboard.stripe.com/payments/${nobody}`,
    );
  });

  it("an account is live by its key's prefix: a secret or restricted live key; test keys and none are not", () => {
    expect(["sk_live_1", "rk_live_1"].map(stripeKeyIsLive)).toEqual([true, true]);
    expect(["sk_test_1", "rk_test_1", "pk_live_1", "xsk_live_1", "", undefined].map(stripeKeyIsLive)).toEqual(
      [false, false, false, false, false, false],
    );
  });

  it("capture_not_recorded: Stripe captured for an order with no payment, or one captured 0", async () => {
    const w = world();
    const none = w.order("pi_none");
    const zero = w.order("pi_zero", 0, { status: "paid" });
    w.stripe.charge("pi_none", 5000);
    w.stripe.charge("pi_zero", 4000);
    const report = await w.run();
    const rows = w.of(report, "capture_not_recorded");
    expect(refs(rows)).toEqual(["ch_pi_none", "ch_pi_zero"]);
    expect(rows.find((m) => m.orderId === none)).toMatchObject({
      ours: { status: "shipped", captured: 0 },
      theirs: { charge: "ch_pi_none", amount: 5000, currency: "usd" },
      detail: "Stripe captured 5000 usd; the order (shipped) has no capture recorded",
      link: `http://shop.test/ops/orders/${none}`,
    });
    expect(rows.find((m) => m.orderId === zero)?.ours).toEqual({ status: "paid", captured: 0 });
    expect(report.totals.usd?.ours.captured).toBe(0);
  });

  it("capture_differs: a cent apart, or another currency; the same in another letter case agrees", async () => {
    const w = world();
    const cent = w.order("pi_cent", 5000);
    w.stripe.charge("pi_cent", 4999);
    const euro = w.order("pi_euro", 5000);
    w.stripe.charge("pi_euro", 5000, { currency: "eur" });
    const upper = w.order("pi_upper", 3000);
    defined(w.db.tables.payment?.find((p) => p.orderId === upper)).currency = "USD";
    w.stripe.charge("pi_upper", 3000);
    w.order("pi_upper_stripe", 2000);
    w.stripe.charge("pi_upper_stripe", 2000, { currency: "USD" });
    const report = await w.run();
    const rows = w.of(report, "capture_differs");
    expect(refs(rows)).toEqual(["ch_pi_cent", "ch_pi_euro"]);
    expect(rows.find((m) => m.orderId === cent)).toMatchObject({
      ours: { amount: 5000, currency: "usd" },
      theirs: { charge: "ch_pi_cent", amount: 4999, currency: "usd" },
      detail: "We recorded 5000 usd captured, Stripe 4999 usd",
    });
    expect(rows.find((m) => m.orderId === euro)?.theirs).toEqual({
      charge: "ch_pi_euro",
      amount: 5000,
      currency: "eur",
    });
    expect(report.totals.usd?.ours.captured).toBe(8000);
    expect(report.totals.USD?.ours.captured).toBe(2000);
    expect(report.totals.eur?.ours.captured).toBe(5000);
    expect(report.totals.eur?.stripe.charges).toBe(5000);
  });

  it("a charge and a refund whose PaymentIntent is expanded are matched by its id", async () => {
    const w = world();
    const order = w.order("pi_expanded", 5000);
    w.stripe.charge("pi_expanded", 4000);
    w.stripe.refundOf("re_expanded", "pi_expanded", 100);
    for (const transaction of defined(w.stripe.pages[0])) {
      const source = transaction.source as unknown as { payment_intent: unknown };
      source.payment_intent = { id: source.payment_intent, object: "payment_intent" };
    }
    w.stripe.open.push(stripeDispute("dp_expanded", "pi_expanded"));
    defined(w.stripe.open[0]).payment_intent = { id: "pi_expanded" } as Stripe.PaymentIntent;
    w.stripe.disputes.set("dp_expanded", stripeDispute("dp_expanded", "pi_expanded"));
    const report = await w.run();
    expect(report.mismatches.map((m) => [m.kind, m.orderId])).toEqual([
      ["capture_differs", order],
      ["refund_not_recorded", order],
      ["dispute_open", order],
    ]);
  });

  it("finds the order through its payment when the order row does not name the PaymentIntent", async () => {
    const w = world();
    const viaPayment = w.order(null, 5000, { status: "delivered" });
    defined(w.db.tables.payment?.find((p) => p.orderId === viaPayment)).providerId = "pi_via";
    w.stripe.charge("pi_via", 4500);
    const report = await w.run();
    expect(w.of(report, "charge_without_order")).toEqual([]);
    expect(w.of(report, "capture_differs")).toMatchObject([
      { orderId: viaPayment, reference: "ch_pi_via", ours: { amount: 5000 } },
    ]);
  });

  it("an order found by its PaymentIntent and one found only through its payment, on one page, are both ours", async () => {
    const w = world();
    const named = w.order("pi_named", 5000);
    const viaPayment = w.order(null, 5000);
    defined(w.db.tables.payment?.find((p) => p.orderId === viaPayment)).providerId = "pi_unnamed";
    w.stripe.charge("pi_named", 4900);
    w.stripe.charge("pi_unnamed", 4800);
    const report = await w.run();
    expect(w.of(report, "charge_without_order")).toEqual([]);
    expect(w.of(report, "capture_differs").map((m) => [m.reference, m.orderId])).toEqual([
      ["ch_pi_named", named],
      ["ch_pi_unnamed", viaPayment],
    ]);
  });

  it("a dearer exchange's difference is checked against the return that charged it", async () => {
    const w = world();
    const exchanged = w.order("pi_order", 5000, { currency: " USD " });
    w.stripe.charge("pi_order", 5000);
    const same = randomUUID();
    w.db.insert("return", {
      id: same,
      orderId: exchanged,
      exchangeChargeIntentId: "pi_exchange",
      exchangeChargeAmount: 1500,
      exchangeChargeRefundId: null,
    });
    w.stripe.charge("pi_exchange", 1500);
    const short = randomUUID();
    w.db.insert("return", {
      id: short,
      orderId: exchanged,
      exchangeChargeIntentId: "pi_exchange_short",
      exchangeChargeAmount: 1500,
      exchangeChargeRefundId: null,
    });
    w.stripe.charge("pi_exchange_short", 1499);
    const unset = randomUUID();
    w.db.insert("return", {
      id: unset,
      orderId: exchanged,
      exchangeChargeIntentId: "pi_exchange_unset",
      exchangeChargeAmount: null,
      exchangeChargeRefundId: null,
    });
    w.stripe.charge("pi_exchange_unset", 800);
    const report = await w.run();
    expect(w.of(report, "charge_without_order")).toEqual([]);
    expect(w.of(report, "capture_not_recorded")).toEqual([]);
    const rows = w.of(report, "capture_differs");
    expect(refs(rows)).toEqual(["ch_pi_exchange_short", "ch_pi_exchange_unset"]);
    expect(rows.find((m) => m.reference === "ch_pi_exchange_short")).toMatchObject({
      orderId: exchanged,
      ours: { amount: 1500, currency: "usd", returnId: short },
      theirs: { amount: 1499, currency: "usd" },
      detail: `We recorded 1500 usd charged for the exchange of return ${short}, Stripe 1499 usd`,
    });
    expect(rows.find((m) => m.reference === "ch_pi_exchange_unset")?.ours).toEqual({
      amount: 0,
      currency: "usd",
      returnId: unset,
    });
    expect(report.totals.usd?.ours.captured).toBe(5000 + 1500 + 1500);
  });

  it("an exchange charged in another currency than its order's is a capture that differs", async () => {
    const w = world();
    const exchanged = w.order("pi_order", 5000);
    w.stripe.charge("pi_order", 5000);
    w.db.insert("return", {
      id: randomUUID(),
      orderId: exchanged,
      exchangeChargeIntentId: "pi_exchange",
      exchangeChargeAmount: 1500,
      exchangeChargeRefundId: null,
    });
    w.stripe.charge("pi_exchange", 1500, { currency: "EUR" });
    w.db.insert("return", {
      id: randomUUID(),
      orderId: exchanged,
      exchangeChargeIntentId: "pi_exchange_upper",
      exchangeChargeAmount: 900,
      exchangeChargeRefundId: null,
    });
    w.stripe.charge("pi_exchange_upper", 900, { currency: "USD" });
    const report = await w.run();
    expect(refs(w.of(report, "capture_differs"))).toEqual(["ch_pi_exchange"]);
  });

  it("reads every page of the day's ledger, each against our records", async () => {
    const w = world();
    const first = w.order("pi_first", 5000);
    const second = w.order("pi_second", 5000);
    w.stripe.charge("pi_first", 4000);
    w.stripe.pages.push([]);
    w.stripe.charge("pi_second", 3000);
    w.stripe.charge("pi_third", 2000);
    const report = await w.run();
    expect(report.stripeTransactions).toBe(3);
    expect(
      w
        .of(report, "capture_differs")
        .map((m) => m.orderId)
        .sort(),
    ).toEqual([first, second].sort());
    expect(refs(w.of(report, "charge_without_order"))).toEqual(["ch_pi_third"]);
  });

  it("counts a source that is neither charge nor refund in the gross, and a dispute's in disputes", async () => {
    const w = world();
    w.stripe.other(-5000, { object: "dispute", id: "dp_x" });
    w.stripe.other(-2000, "po_unexpanded");
    w.stripe.other(300, null);
    w.stripe.other(-100, { object: "payout", id: "po_1", payment_intent: "pi_nothing" });
    const report = await w.run();
    expect(report.mismatches).toEqual([]);
    expect(report.totals.usd?.stripe).toEqual({
      charges: 0,
      refunds: 0,
      disputes: -5000,
      gross: -6800,
      fees: 4,
      net: -6804,
    });
  });
});

describe("reconciliation, in memory: what a page of the ledger reads", () => {
  /** How many times the run asked `call` (`order.findMany`), beyond what a run over an empty ledger asks. */
  async function extraReads(w: ReturnType<typeof world>, call: string): Promise<number> {
    const empty = world();
    await empty.run();
    await w.run();
    const count = (calls: string[]) => calls.filter((each) => each === call).length;
    return count(w.db.calls) - count(empty.db.calls);
  }

  it("reads the orders' timeline only for a page with a refund and an order of ours", async () => {
    // Charges of an order of ours and no refund.
    const charged = world();
    charged.order("pi_charged", 5000);
    charged.stripe.charge("pi_charged", 5000);
    expect(await extraReads(charged, "orderTimelineEntry.findMany")).toBe(0);
    // A refund of no order of ours, beside a dispute of one: a dispute's PaymentIntent is not looked up.
    const stranger = world();
    stranger.order("pi_disputed", 5000);
    stranger.stripe.refundOf("re_stranger", "pi_stranger", 300);
    stranger.stripe.other(-5000, { object: "dispute", id: "dp_page", payment_intent: "pi_disputed" });
    expect(await extraReads(stranger, "orderTimelineEntry.findMany")).toBe(0);
    // A refund of an order of ours: once.
    const refunded = world();
    refunded.order("pi_refunded", 5000);
    refunded.stripe.refundOf("re_ours", "pi_refunded", 300);
    expect(await extraReads(refunded, "orderTimelineEntry.findMany")).toBe(1);
  });

  it("reads orders by id only when a payment's order row does not name its PaymentIntent", async () => {
    const named = world();
    named.order("pi_named", 5000);
    named.stripe.charge("pi_named", 5000);
    expect(await extraReads(named, "order.findMany")).toBe(0);
    const unnamed = world();
    const viaPayment = unnamed.order(null, 5000);
    defined(unnamed.db.tables.payment?.find((p) => p.orderId === viaPayment)).providerId = "pi_unnamed";
    unnamed.stripe.charge("pi_unnamed", 5000);
    expect(await extraReads(unnamed, "order.findMany")).toBe(1);
  });
});

describe("reconciliation, in memory: refunds", () => {
  it("refund_not_recorded: a refund at Stripe we have no record of, on an order of ours or none", async () => {
    const w = world();
    const refunded = w.order("pi_refunded", 5000, { status: "refunded" });
    defined(w.db.tables.payment?.find((p) => p.orderId === refunded)).amountRefunded = 900;
    w.stripe.charge("pi_refunded", 5000);
    w.stripe.refundOf("re_lost", "pi_refunded", 700);
    w.stripe.refundOf("re_stranger", "pi_stranger", 300);
    w.stripe.refundOf("re_bare", null, 200);
    // Failed and cancelled refunds moved no money: counted in Stripe's total, never reported.
    w.stripe.refundOf("re_failed", "pi_refunded", 50, "failed");
    w.stripe.refundOf("re_canceled", "pi_refunded", 60, "canceled");
    const report = await w.run();
    const rows = w.of(report, "refund_not_recorded");
    expect(refs(rows)).toEqual(["re_bare", "re_lost", "re_stranger"]);
    expect(rows.find((m) => m.reference === "re_lost")).toEqual({
      kind: "refund_not_recorded",
      orderId: refunded,
      reference: "re_lost",
      ours: { refunded: 900, status: "refunded" },
      theirs: { refund: "re_lost", amount: 700, currency: "usd" },
      detail: "Stripe refunded 700 usd; we have no record of this refund",
      link: `http://shop.test/ops/orders/${refunded}`,
    });
    expect(rows.find((m) => m.reference === "re_stranger")).toMatchObject({
      orderId: null,
      ours: null,
      link: "https://dashboard.stripe.com/test/refunds/re_stranger",
    });
    expect(report.totals.usd?.stripe.refunds).toBe(-(700 + 300 + 200 + 50 + 60));
    expect(report.totals.usd?.ours.refunded).toBe(0);
  });

  it("refund_not_recorded names the order found through its payment, and what it refunded", async () => {
    const w = world();
    const viaPayment = w.order(null, 5000);
    const payment = defined(w.db.tables.payment?.find((p) => p.orderId === viaPayment));
    payment.providerId = "pi_via";
    payment.amountRefunded = 250;
    w.stripe.refundOf("re_lost", "pi_via", 700);
    const report = await w.run();
    expect(w.of(report, "refund_not_recorded")).toMatchObject([
      { orderId: viaPayment, ours: { refunded: 250, status: "shipped" } },
    ]);
  });

  it("refund_not_recorded on an order with no payment recorded says it refunded nothing", async () => {
    const w = world();
    const unpaid = w.order("pi_unpaid", undefined, { status: "cancelled" });
    w.stripe.refundOf("re_unpaid", "pi_unpaid", 700);
    const report = await w.run();
    expect(w.of(report, "refund_not_recorded")).toMatchObject([
      { orderId: unpaid, ours: { refunded: 0, status: "cancelled" } },
    ]);
  });

  it("refund_differs: a cent apart, or failed on our side; a pending one agrees but is not counted", async () => {
    const w = world();
    const order = w.order("pi_refunds", 5000);
    w.recordRefund(order, "re_cent", 1000);
    w.stripe.refundOf("re_cent", "pi_refunds", 1001);
    w.recordRefund(order, "re_failed_here", 400, { status: "failed" });
    w.stripe.refundOf("re_failed_here", "pi_refunds", 400);
    w.recordRefund(order, "re_pending", 300, { status: "pending" });
    w.stripe.refundOf("re_pending", "pi_refunds", 300);
    w.recordRefund(order, "re_same", 200);
    w.stripe.refundOf("re_same", "pi_refunds", 200);
    const report = await w.run();
    const rows = w.of(report, "refund_differs");
    expect(refs(rows)).toEqual(["re_cent", "re_failed_here"]);
    expect(rows.find((m) => m.reference === "re_cent")).toMatchObject({
      orderId: order,
      ours: { amount: 1000, currency: "usd", status: "succeeded" },
      theirs: { refund: "re_cent", amount: 1001, currency: "usd", status: "succeeded" },
      detail: "We recorded 1000 usd (succeeded), Stripe refunded 1001 usd",
    });
    expect(rows.find((m) => m.reference === "re_failed_here")?.ours).toMatchObject({ status: "failed" });
    expect(w.of(report, "refund_not_recorded")).toEqual([]);
    // Ours: the succeeded ones only.
    expect(report.totals.usd?.ours.refunded).toBe(1000 + 200);
  });

  it("the fulfilment's own refunds are known from the order's timeline, only from its refund kinds", async () => {
    const w = world();
    const order = w.order("pi_fulfil", 5000);
    w.stripe.charge("pi_fulfil", 5000);
    const kinds = ["payment-refunded", "payment-captured-after-cancel", "short-lines-refunded"];
    for (const [index, kind] of kinds.entries()) {
      w.db.insert("orderTimelineEntry", {
        orderId: order,
        kind,
        detail: { refundId: `re_own_${index}`, amount: 100 * (index + 1) },
        createdAt: noon,
      });
      w.stripe.refundOf(`re_own_${index}`, "pi_fulfil", 100 * (index + 1));
    }
    // Not a refund's entry, and another order's (the decoy's) entry naming this order's refund.
    w.db.insert("orderTimelineEntry", {
      orderId: order,
      kind: "note-added",
      detail: { refundId: "re_noted", amount: 50 },
      createdAt: noon,
    });
    w.stripe.refundOf("re_noted", "pi_fulfil", 50);
    w.db.insert("orderTimelineEntry", {
      orderId: w.decoy.id,
      kind: "payment-refunded",
      detail: { refundId: "re_elsewhere", amount: 70 },
      createdAt: noon,
    });
    w.stripe.refundOf("re_elsewhere", "pi_fulfil", 70);
    const report = await w.run();
    expect(refs(w.of(report, "refund_not_recorded"))).toEqual(["re_elsewhere", "re_noted"]);
    expect(report.totals.usd?.ours.refunded).toBe(100 + 200 + 300);
  });

  it("a timeline entry without a refund id, or with an amount that is no number, still counts Stripe's", async () => {
    const w = world();
    const order = w.order("pi_fulfil", 5000);
    w.stripe.charge("pi_fulfil", 5000);
    w.db.insert("orderTimelineEntry", {
      orderId: order,
      kind: "payment-refunded",
      detail: null,
      createdAt: noon,
    });
    w.db.insert("orderTimelineEntry", {
      orderId: order,
      kind: "payment-refunded",
      detail: { refundId: "re_text", amount: "120" },
      createdAt: noon,
    });
    w.stripe.refundOf("re_text", "pi_fulfil", 120);
    const report = await w.run();
    expect(report.mismatches).toEqual([]);
    expect(report.totals.usd?.ours.refunded).toBe(120);
  });

  it("an exchange charge's refund (its undo) is ours, in full", async () => {
    const w = world();
    const order = w.order("pi_order", 5000);
    w.db.insert("return", {
      id: randomUUID(),
      orderId: order,
      exchangeChargeIntentId: "pi_exchange",
      exchangeChargeAmount: 1500,
      exchangeChargeRefundId: "re_exchange",
    });
    w.db.insert("return", {
      id: randomUUID(),
      orderId: w.decoy.id,
      exchangeChargeIntentId: null,
      exchangeChargeAmount: null,
      exchangeChargeRefundId: "re_decoy_exchange",
    });
    w.stripe.refundOf("re_exchange", "pi_exchange", 1500);
    w.stripe.refundOf("re_other", "pi_exchange", 10);
    const report = await w.run();
    expect(refs(w.of(report, "refund_not_recorded"))).toEqual(["re_other"]);
    expect(report.totals.usd?.ours.refunded).toBe(1500);
  });

  it("refund_not_at_stripe: a refund recorded as made in the day that Stripe does not have", async () => {
    const w = world();
    const order = w.order("pi_refunds", 5000);
    const ghost = w.recordRefund(order, "re_ghost", 200);
    // Twins: at Stripe on another day; in the day's ledger; pending; without Stripe's id; recorded
    // the day before or after; failed.
    w.recordRefund(order, "re_yesterday_at_stripe", 100);
    w.stripe.refunds.set("re_yesterday_at_stripe", { id: "re_yesterday_at_stripe" } as Stripe.Refund);
    w.recordRefund(order, "re_in_ledger", 150);
    w.stripe.refundOf("re_in_ledger", "pi_refunds", 150);
    w.recordRefund(order, "re_pending", 90, { status: "pending" });
    w.recordRefund(order, null, 80);
    w.recordRefund(order, "re_before", 70, { createdAt: new Date(at("00:00:00").getTime() - 1) });
    w.recordRefund(order, "re_after", 60, { createdAt: new Date("2026-12-06T00:00:00Z") });
    w.recordRefund(order, "re_failed", 50, { status: "failed" });
    w.recordRefund(order, "re_first_ms", 40, { createdAt: at("00:00:00") });
    const report = await w.run();
    const rows = w.of(report, "refund_not_at_stripe");
    expect(refs(rows)).toEqual(["re_first_ms", "re_ghost"]);
    expect(rows.find((m) => m.reference === "re_ghost")).toEqual({
      kind: "refund_not_at_stripe",
      orderId: order,
      reference: "re_ghost",
      ours: { refund: ghost.id, amount: 200, currency: "usd" },
      theirs: null,
      detail: "We recorded a refund of 200 usd that Stripe does not have",
      link: `http://shop.test/ops/orders/${order}`,
    });
    // A refund seen in the day's ledger is not asked of Stripe again.
    expect(w.stripe.refundsAsked).not.toContain("re_in_ledger");
  });

  it("refund_not_at_stripe reads the day's recorded refunds 500 at a time, every one of them", async () => {
    const w = world();
    const order = w.order("pi_many", 5000);
    for (let i = 0; i < 1001; i++) {
      const id = `re_${String(i).padStart(4, "0")}`;
      // Straight into the table: a thousand inserts each checked for uniqueness cost a second.
      w.db.tables.refund?.push({
        id: `${String(i).padStart(4, "0")}-refund`,
        orderId: order,
        providerId: id,
        amount: 1,
        currency: "usd",
        status: "succeeded",
        createdAt: noon,
      });
      if (i !== 0 && i !== 499 && i !== 500 && i !== 1000) w.stripe.refunds.set(id, { id } as Stripe.Refund);
    }
    const report = await w.run();
    // In the report in the order read: by id, page after page.
    expect(w.of(report, "refund_not_at_stripe").map((m) => m.reference)).toEqual([
      "re_0000",
      "re_0499",
      "re_0500",
      "re_1000",
    ]);
    expect(w.stripe.refundsAsked).toHaveLength(1001);
  });
});

const stripeDispute = (id: string, intent: string | null, fields: Record<string, unknown> = {}) =>
  ({
    id,
    payment_intent: intent,
    amount: 5000,
    currency: "usd",
    reason: "fraudulent",
    status: "needs_response",
    evidence_details: { due_by: null },
    ...fields,
  }) as unknown as Stripe.Dispute;

describe("reconciliation, in memory: disputes", () => {
  it("dispute_open: every dispute Stripe holds open, with its order found either way", async () => {
    const w = world();
    const direct = w.order("pi_direct", 5000, { status: "disputed" });
    const viaPayment = w.order(null, 5000, { status: "on_hold" });
    defined(w.db.tables.payment?.find((p) => p.orderId === viaPayment)).providerId = "pi_via";
    const due = Date.parse("2026-12-20T23:59:59Z") / 1000;
    w.stripe.open.push(
      stripeDispute("dp_direct", "pi_direct", { evidence_details: { due_by: due } }),
      stripeDispute("dp_via", "pi_via", { status: "warning_under_review", amount: 1200 }),
      stripeDispute("dp_stranger", "pi_stranger"),
      stripeDispute("dp_bare", null, { evidence_details: undefined }),
    );
    for (const id of ["dp_direct", "dp_via", "dp_stranger", "dp_bare"])
      w.stripe.disputes.set(id, stripeDispute(id, null));
    const report = await w.run();
    const rows = w.of(report, "dispute_open");
    expect(refs(rows)).toEqual(["dp_bare", "dp_direct", "dp_stranger", "dp_via"]);
    expect(rows.find((m) => m.reference === "dp_direct")).toEqual({
      kind: "dispute_open",
      orderId: direct,
      reference: "dp_direct",
      ours: { status: "disputed" },
      theirs: {
        dispute: "dp_direct",
        amount: 5000,
        currency: "usd",
        reason: "fraudulent",
        status: "needs_response",
        evidenceDueBy: "2026-12-20T23:59:59.000Z",
      },
      detail: "Dispute (fraudulent) needs_response: 5000 usd",
      link: `http://shop.test/ops/orders/${direct}`,
    });
    expect(rows.find((m) => m.reference === "dp_via")).toMatchObject({
      orderId: viaPayment,
      ours: { status: "on_hold" },
      theirs: { evidenceDueBy: null, amount: 1200, status: "warning_under_review" },
    });
    expect(rows.find((m) => m.reference === "dp_bare")?.theirs).toMatchObject({ evidenceDueBy: null });
    for (const stranger of ["dp_stranger", "dp_bare"])
      expect(rows.find((m) => m.reference === stranger)).toMatchObject({
        orderId: null,
        ours: null,
        link: `https://dashboard.stripe.com/test/disputes/${stranger}`,
      });
    expect(w.stripe.openUntil).toEqual([new Date("2026-12-06T00:00:00Z")]);
  });

  it("dispute_not_at_stripe: one we hold open, or recorded in the day, that Stripe never opened", async () => {
    const w = world();
    const order = w.order("pi_disputed", 5000);
    const dispute = (providerId: string, status: string, createdAt: Date) =>
      w.db.insert("dispute", {
        orderId: order,
        providerId,
        status,
        amount: 5000,
        currency: "usd ",
        reason: "fraudulent",
        createdAt,
      });
    dispute("dp_forged", "needs_response", noon);
    dispute("dp_old_open", "under_review", new Date(noon.getTime() - 30 * 86_400_000));
    dispute("dp_closed_today", "won", new Date(noon.getTime() + 1000));
    // Twins: Stripe has it; closed before the day; recorded after the day; each closed status.
    dispute("dp_real", "needs_response", noon);
    w.stripe.disputes.set("dp_real", stripeDispute("dp_real", "pi_disputed", { status: "won" }));
    for (const status of ["won", "lost", "warning_closed", "prevented", "charge_refunded"])
      dispute(`dp_closed_${status}`, status, dayBefore);
    dispute("dp_tomorrow", "needs_response", new Date("2026-12-06T00:00:00Z"));
    const report = await w.run();
    const rows = w.of(report, "dispute_not_at_stripe");
    // Oldest first.
    expect(rows.map((m) => m.reference)).toEqual(["dp_old_open", "dp_forged", "dp_closed_today"]);
    expect(rows.find((m) => m.reference === "dp_forged")).toEqual({
      kind: "dispute_not_at_stripe",
      orderId: order,
      reference: "dp_forged",
      ours: { status: "needs_response", amount: 5000, currency: "usd" },
      theirs: null,
      detail: "We recorded dispute dp_forged (needs_response, 5000 usd) that Stripe does not have",
      link: `http://shop.test/ops/orders/${order}`,
    });
  });
});

describe("reconciliation, in memory: orders not shipped in time", () => {
  it("not_shipped_in_time: paid or fulfilling, a physical line, no shipment, placed before the window", async () => {
    const w = world();
    const old = new Date(Date.parse("2026-12-06T00:00:00Z") - 2 * 86_400_000 - 1);
    const late = w.order(null, undefined, { status: "paid", createdAt: old });
    const fulfilling = w.order(null, undefined, { status: "fulfilling", createdAt: old });
    // Twins: placed at the window's edge; shipped; digital only; already shipped; cancelled.
    w.order(null, undefined, { status: "paid", createdAt: new Date(old.getTime() + 1) });
    const withShipment = w.order(null, undefined, { status: "paid", createdAt: old });
    w.db.insert("shipment", { orderId: withShipment, providerId: null, trackingNumber: "TRK-SHIPPED" });
    const digital = w.order(null, undefined, { status: "paid", createdAt: old });
    defined(w.db.tables.orderLine?.find((l) => l.orderId === digital)).sku = "EBOOK";
    w.order(null, undefined, { status: "shipped", createdAt: old });
    w.order(null, undefined, { status: "cancelled", createdAt: old });
    const report = await w.run();
    const rows = w.of(report, "not_shipped_in_time");
    expect(rows.map((m) => m.orderId).sort()).toEqual([fulfilling, late].sort());
    expect(rows.find((m) => m.orderId === late)).toEqual({
      kind: "not_shipped_in_time",
      orderId: late,
      reference: late,
      ours: { status: "paid", placedAt: old.toISOString() },
      theirs: null,
      detail: `Paid and not shipped since ${old.toISOString()}`,
      link: `http://shop.test/ops/orders/${late}`,
    });
  });

  it("lists the oldest first", async () => {
    const w = world();
    const older = w.order(null, undefined, { status: "paid", createdAt: new Date("2026-11-20T00:00:00Z") });
    const newer = w.order(null, undefined, { status: "paid", createdAt: new Date("2026-11-25T00:00:00Z") });
    const oldest = w.order(null, undefined, { status: "paid", createdAt: new Date("2026-11-10T00:00:00Z") });
    const report = await w.run();
    expect(w.of(report, "not_shipped_in_time").map((m) => m.orderId)).toEqual([oldest, older, newer]);
  });
});

describe("reconciliation, in memory: the stock ledger", () => {
  it("stock_ledger_differs: each product whose stock is not the sum of its movements, linked to it", async () => {
    const w = world();
    w.stock.push({ sku: "MUG", stockOnHand: 12, ledgerSum: 10 });
    const report = await w.run();
    expect(w.of(report, "stock_ledger_differs")).toEqual([
      {
        kind: "stock_ledger_differs",
        orderId: null,
        reference: "MUG",
        ours: { stockOnHand: 12 },
        theirs: { ledgerSum: 10 },
        detail: "MUG has 12 on hand, its stock movements sum to 10: stock was changed without its ledger row",
        link: "http://shop.test/ops/products/MUG",
      },
    ]);
  });

  it("without a product page the row links nothing; without the check nothing is reported", async () => {
    const linkless = world({ productUrl: undefined });
    linkless.stock.push({ sku: "MUG", stockOnHand: 1, ledgerSum: 0 });
    expect((await linkless.run()).mismatches.map((m) => m.link)).toEqual([""]);
    const unchecked = world({ stockLedger: undefined });
    unchecked.stock.push({ sku: "MUG", stockOnHand: 1, ledgerSum: 0 });
    expect((await unchecked.run()).mismatches).toEqual([]);
  });
});

describe("reconciliation, in memory: the carrier's labels", () => {
  it("label_without_shipment: a label the carrier charged for that no shipment or return of ours holds", async () => {
    const w = world();
    const order = w.order("pi_labels", 5000);
    w.db.insert("shipment", { orderId: order, providerId: "shp_ours", trackingNumber: "TRK-OURS" });
    w.db.insert("shipment", { orderId: order, providerId: null, trackingNumber: "TRK-BY-CODE" });
    w.db.insert("return", {
      id: randomUUID(),
      orderId: order,
      labelProviderId: "shp_ret",
      labelTrackingNumber: null,
    });
    w.db.insert("return", {
      id: randomUUID(),
      orderId: order,
      labelProviderId: null,
      labelTrackingNumber: "TRK-RET",
    });
    w.carrier.label({ id: "shp_ours", trackingCode: "TRK-OURS" });
    w.carrier.label({ id: "shp_by_code", trackingCode: "TRK-BY-CODE" });
    w.carrier.label({ id: "shp_ret", trackingCode: "TRK-RET-1" });
    w.carrier.label({ id: "shp_ret_2", trackingCode: "TRK-RET" });
    // A refunded (or submitted) label cost nothing: not an orphan.
    w.carrier.label({ id: "shp_refunded", trackingCode: "TRK-X1", refundStatus: "refunded" });
    w.carrier.label({ id: "shp_submitted", trackingCode: "TRK-X2", refundStatus: "submitted" });
    const upper = randomUUID().toUpperCase();
    w.carrier.label({ id: "shp_orphan", trackingCode: "TRK-ORPHAN", reference: `order-${upper}` });
    w.carrier.label({
      id: "shp_reship",
      trackingCode: null,
      reference: `order-${order}-12-reship-10`,
      rate: null,
    });
    w.carrier.label({
      id: "shp_parcel",
      trackingCode: "TRK-P",
      reference: `order-${order}-3`,
      refundStatus: "rejected",
    });
    w.carrier.label({ id: "shp_stranger", trackingCode: "TRK-S", reference: "nothing" });
    w.carrier.label({ id: "shp_bad_ref", trackingCode: "TRK-B", reference: `order-${order}-x` });
    w.carrier.label({ id: "shp_not_uuid", trackingCode: "TRK-N", reference: `order-${"-".repeat(36)}` });
    w.carrier.label({ id: "shp_prefixed", trackingCode: "TRK-Q", reference: `xorder-${order}` });
    const report = await w.run();
    const rows = w.of(report, "label_without_shipment");
    expect(refs(rows)).toEqual(
      [
        "shp_bad_ref",
        "shp_not_uuid",
        "shp_orphan",
        "shp_parcel",
        "shp_prefixed",
        "shp_reship",
        "shp_stranger",
      ].sort(),
    );
    const by = (id: string) => rows.find((m) => m.reference === id);
    expect(by("shp_orphan")).toEqual({
      kind: "label_without_shipment",
      orderId: upper.toLowerCase(),
      reference: "shp_orphan",
      ours: null,
      theirs: {
        shipment: "shp_orphan",
        trackingCode: "TRK-ORPHAN",
        reference: `order-${upper}`,
        rate: { amount: "7.50", currency: "USD" },
      },
      detail: "The carrier charged 7.50 USD (TRK-ORPHAN) that belongs to no shipment of ours",
      link: `http://shop.test/ops/orders/${upper.toLowerCase()}`,
    });
    expect(by("shp_reship")).toMatchObject({
      orderId: order,
      detail: "The carrier charged for a label (shp_reship) that belongs to no shipment of ours",
    });
    expect(by("shp_parcel")?.orderId).toBe(order);
    for (const id of ["shp_stranger", "shp_bad_ref", "shp_not_uuid", "shp_prefixed"]) {
      expect(by(id)).toMatchObject({ orderId: null, link: "" });
    }
    expect(report.carrierShipments).toBe(13);
  });

  it("a label of the decoy's tracking number on another label id is still the decoy's, not an orphan", async () => {
    const w = world();
    w.carrier.label({ id: "shp_other_id", trackingCode: "TRK-DECOY" });
    w.carrier.label({ id: "shp_decoy", trackingCode: null });
    const report = await w.run();
    expect(report.mismatches).toEqual([]);
  });

  it("reads every page of the carrier's labels", async () => {
    const w = world();
    w.carrier.label({ id: "shp_a", trackingCode: "TRK-A" });
    w.carrier.pages.push([]);
    w.carrier.label({ id: "shp_b", trackingCode: "TRK-B" });
    w.carrier.pages.push([]);
    w.db.insert("shipment", { orderId: w.decoy.id, providerId: "shp_c", trackingNumber: "TRK-C" });
    w.carrier.label({ id: "shp_c", trackingCode: "TRK-C" });
    const report = await w.run();
    expect(refs(w.of(report, "label_without_shipment"))).toEqual(["shp_a", "shp_b"]);
    expect(report.carrierShipments).toBe(3);
  });

  it("without a carrier wired, no label is read and none reported", async () => {
    const w = world({ carrier: undefined });
    w.carrier.label({ id: "shp_orphan", trackingCode: "TRK-ORPHAN" });
    const report = await w.run();
    expect(report.carrierShipments).toBe(0);
    expect(report.mismatches).toEqual([]);
  });
});

describe("reconciliation, in memory: labels handed back and not refunded", () => {
  /** A label of `order` handed back in the day by `via`, recorded as a shipment. */
  function handedBack(
    w: ReturnType<typeof world>,
    order: string,
    trackingNumber: string,
    fields: { via?: string; providerId?: string | null; ours?: string | null; createdAt?: Date } = {},
  ) {
    if (fields.providerId !== undefined || fields.ours !== undefined)
      w.db.insert("shipment", {
        orderId: order,
        providerId: fields.providerId ?? null,
        trackingNumber,
        labelRefundStatus: fields.ours ?? "submitted",
      });
    w.db.insert("orderTimelineEntry", {
      orderId: order,
      kind: fields.via ?? "label-refund-requested",
      detail: { trackingNumber, parcelNumber: 1 },
      createdAt: fields.createdAt ?? noon,
    });
  }

  it("void_not_refunded: a label of the day's pages handed back that the carrier refused to refund", async () => {
    const w = world();
    const order = w.order("pi_voids", 5000);
    handedBack(w, order, "TRK-REJ", { providerId: "shp_rej" });
    w.carrier.label({ id: "shp_rej", trackingCode: "TRK-REJ", refundStatus: "rejected" });
    handedBack(w, order, "TRK-NONE", { providerId: "shp_none" });
    w.carrier.label({ id: "shp_none", trackingCode: "TRK-NONE", refundStatus: null });
    handedBack(w, order, "TRK-REF", { providerId: "shp_ref" });
    w.carrier.label({ id: "shp_ref", trackingCode: "TRK-REF", refundStatus: "refunded" });
    handedBack(w, order, "TRK-SUB", { providerId: "shp_sub" });
    w.carrier.label({ id: "shp_sub", trackingCode: "TRK-SUB", refundStatus: "submitted" });
    // Billed on scan: nothing to refund until the carrier charges it.
    handedBack(w, order, "TRK-SCAN", { providerId: "shp_scan" });
    w.carrier.label({
      id: "shp_scan",
      trackingCode: "TRK-SCAN",
      refundStatus: "not_applicable",
      postageCharged: false,
    });
    handedBack(w, order, "TRK-SCANNED", { providerId: "shp_scanned" });
    w.carrier.label({ id: "shp_scanned", trackingCode: "TRK-SCANNED", refundStatus: "not_applicable" });
    // The run's own void of a parcel booked after a cancel, bought in the day: never recorded, so
    // unknown to our shipments, and still a void, not an orphan.
    w.db.insert("orderTimelineEntry", {
      orderId: order,
      kind: "shipment-voided",
      detail: { trackingNumber: "TRK-LATE-TODAY", outcome: "voided" },
      createdAt: noon,
    });
    w.carrier.label({ id: "shp_late_today", trackingCode: "TRK-LATE-TODAY", refundStatus: "rejected" });
    const report = await w.run();
    const rows = w.of(report, "void_not_refunded");
    expect(refs(rows)).toEqual(["shp_late_today", "shp_none", "shp_rej", "shp_scanned"]);
    expect(rows.find((m) => m.reference === "shp_rej")).toEqual({
      kind: "void_not_refunded",
      orderId: order,
      reference: "shp_rej",
      ours: {
        voided: true,
        trackingNumber: "TRK-REJ",
        via: "label-refund-requested",
        refundStatus: "submitted",
      },
      theirs: {
        shipment: "shp_rej",
        refundStatus: "rejected",
        rate: { amount: "7.50", currency: "USD" },
        postageCharged: true,
      },
      detail:
        "We handed back label TRK-REJ (label-refund-requested); the carrier's refund status is rejected",
      link: `http://shop.test/ops/orders/${order}`,
    });
    expect(rows.find((m) => m.reference === "shp_none")?.detail).toBe(
      "We handed back label TRK-NONE (label-refund-requested); the carrier's refund status is none",
    );
    // A void of the day's pages is not an orphan, and is not asked of the carrier again.
    expect(w.of(report, "label_without_shipment")).toEqual([]);
    expect(w.carrier.asked).toEqual([]);
  });

  it("a label bought on another day is asked of the carrier by its id, or by its reference", async () => {
    const w = world();
    const order = w.order("pi_voids", 5000);
    handedBack(w, order, "TRK-OLD", { providerId: "shp_old" });
    w.carrier.label({ id: "shp_old", trackingCode: "TRK-OLD", refundStatus: "rejected" }, [], false);
    handedBack(w, order, "TRK-OLD-OK", { providerId: "shp_old_ok" });
    w.carrier.label({ id: "shp_old_ok", trackingCode: "TRK-OLD-OK", refundStatus: "refunded" }, [], false);
    // The run's own void of a parcel booked after a cancel: never recorded, found by its reference.
    handedBack(w, order, "TRK-LATE", { via: "shipment-voided" });
    defined(w.db.tables.orderTimelineEntry?.at(-1)).detail = {
      trackingNumber: "TRK-LATE",
      outcome: "voided",
    };
    w.carrier.label(
      { id: "shp_late", trackingCode: "TRK-LATE", refundStatus: "rejected" },
      [`order-${order}`],
      false,
    );
    const report = await w.run();
    expect(refs(w.of(report, "void_not_refunded"))).toEqual(["shp_late", "shp_old"]);
    expect(w.carrier.asked.sort()).toEqual([`order-${order}`, "shp_old", "shp_old_ok"].sort());
  });

  it("a label the carrier no longer has is reported only when we heard its refund refused", async () => {
    const w = world();
    const order = w.order("pi_voids", 5000);
    handedBack(w, order, "TRK-GONE-REJ", { via: "label-refund-rejected" });
    // Another order's label, gone at the carrier too, whose refund we never heard refused.
    handedBack(w, w.order("pi_other", 5000), "TRK-GONE", {});
    const report = await w.run();
    const rows = w.of(report, "void_not_refunded");
    expect(rows).toEqual([
      {
        kind: "void_not_refunded",
        orderId: order,
        reference: `order-${order}`,
        ours: {
          voided: true,
          trackingNumber: "TRK-GONE-REJ",
          via: "label-refund-rejected",
          refundStatus: "rejected",
        },
        theirs: null,
        detail:
          "We handed back label TRK-GONE-REJ (label-refund-rejected); the carrier's refund status is unknown, ours rejected",
        link: `http://shop.test/ops/orders/${order}`,
      },
    ]);
  });

  it("a void handed back on an earlier day is reported once the carrier rejects it, with our status", async () => {
    const w = world();
    const order = w.order("pi_voids", 5000);
    const earlier = (trackingNumber: string, providerId: string | null, ours: string | null) =>
      w.db.insert("shipment", { orderId: order, providerId, trackingNumber, labelRefundStatus: ours });
    earlier("TRK-E-REJ", "shp_e_rej", "rejected");
    w.carrier.label({ id: "shp_e_rej", trackingCode: "TRK-E-REJ", refundStatus: "rejected" }, [], false);
    earlier("TRK-E-SCANNED", null, "not_applicable");
    w.carrier.label(
      { id: "shp_e_scanned", trackingCode: "TRK-E-SCANNED", refundStatus: "not_applicable" },
      ["TRK-E-SCANNED"],
      false,
    );
    // Twins: since refunded after all; billed on scan and never scanned; the carrier has none; ours
    // submitted (still being decided), refunded or never asked.
    earlier("TRK-E-OK", "shp_e_ok", "rejected");
    w.carrier.label({ id: "shp_e_ok", trackingCode: "TRK-E-OK", refundStatus: "refunded" }, [], false);
    earlier("TRK-E-UNSCANNED", "shp_e_unscanned", "not_applicable");
    w.carrier.label(
      {
        id: "shp_e_unscanned",
        trackingCode: "TRK-E-UNSCANNED",
        refundStatus: "not_applicable",
        postageCharged: false,
      },
      [],
      false,
    );
    earlier("TRK-E-GONE", "shp_e_gone", "rejected");
    // The carrier no longer says anything of its refund: not a refusal.
    earlier("TRK-E-SILENT", "shp_e_silent", "rejected");
    w.carrier.label({ id: "shp_e_silent", trackingCode: "TRK-E-SILENT", refundStatus: null }, [], false);
    for (const [index, ours] of ["submitted", "refunded", null].entries()) {
      earlier(`TRK-E-${index}`, `shp_e_${index}`, ours);
      w.carrier.label(
        { id: `shp_e_${index}`, trackingCode: `TRK-E-${index}`, refundStatus: "rejected" },
        [],
        false,
      );
    }
    const report = await w.run();
    const rows = w.of(report, "void_not_refunded");
    expect(refs(rows)).toEqual(["shp_e_rej", "shp_e_scanned"]);
    expect(rows.map((m) => m.orderId)).toEqual([order, order]);
    expect(rows.find((m) => m.reference === "shp_e_rej")?.ours).toEqual({
      voided: true,
      trackingNumber: "TRK-E-REJ",
      via: "label-refund-requested",
      refundStatus: "rejected",
    });
    expect(rows.find((m) => m.reference === "shp_e_scanned")?.ours).toMatchObject({
      refundStatus: "not_applicable",
    });
    expect(w.carrier.asked).not.toContain("shp_e_0");
  });

  it("a return label handed back, on the day or earlier, is reported while the carrier refuses its refund", async () => {
    const w = world();
    const order = w.order("pi_returns", 5000);
    const returned = (id: string, fields: Record<string, unknown>) =>
      w.db.insert("return", {
        id,
        orderId: order,
        labelTrackingNumber: null,
        labelProviderId: null,
        labelRefundStatus: null,
        ...fields,
      });
    const today = randomUUID();
    returned(today, {
      labelTrackingNumber: "TRK-RET-TODAY",
      labelProviderId: "shp_ret_today",
      labelRefundStatus: "submitted",
    });
    w.db.insert("orderTimelineEntry", {
      orderId: order,
      kind: "return-label-refund-requested",
      detail: { returnId: today, status: "submitted" },
      createdAt: noon,
    });
    w.carrier.label({
      id: "shp_ret_today",
      trackingCode: "TRK-RET-TODAY",
      refundStatus: "rejected",
      reference: `return-${today}`,
    });
    const before = randomUUID();
    returned(before, {
      labelTrackingNumber: "TRK-RET-BEFORE",
      labelProviderId: "shp_ret_before",
      labelRefundStatus: "submitted",
    });
    w.carrier.label(
      { id: "shp_ret_before", trackingCode: "TRK-RET-BEFORE", refundStatus: "rejected" },
      [],
      false,
    );
    const untracked = randomUUID();
    returned(untracked, {
      labelTrackingNumber: null,
      labelProviderId: "shp_ret_untracked",
      labelRefundStatus: "rejected",
    });
    w.carrier.label({ id: "shp_ret_untracked", refundStatus: "rejected" }, [], false);
    // Twins: no label id kept (not asked), refunded on our side, accepted by the carrier since.
    const noId = randomUUID();
    returned(noId, { labelTrackingNumber: "TRK-RET-NOID", labelRefundStatus: "rejected" });
    // Billed on scan and scanned since it was handed back: the carrier charges it now.
    returned(randomUUID(), {
      labelTrackingNumber: "TRK-RET-SCANNED",
      labelProviderId: "shp_ret_scanned",
      labelRefundStatus: "not_applicable",
    });
    w.carrier.label(
      { id: "shp_ret_scanned", trackingCode: "TRK-RET-SCANNED", refundStatus: "not_applicable" },
      [],
      false,
    );
    returned(randomUUID(), {
      labelTrackingNumber: "TRK-RET-DONE",
      labelProviderId: "shp_ret_done",
      labelRefundStatus: "refunded",
    });
    w.carrier.label(
      { id: "shp_ret_done", trackingCode: "TRK-RET-DONE", refundStatus: "rejected" },
      [],
      false,
    );
    returned(randomUUID(), {
      labelTrackingNumber: "TRK-RET-OK",
      labelProviderId: "shp_ret_ok",
      labelRefundStatus: "submitted",
    });
    w.carrier.label({ id: "shp_ret_ok", trackingCode: "TRK-RET-OK", refundStatus: "refunded" }, [], false);
    const report = await w.run();
    const rows = w.of(report, "void_not_refunded");
    expect(refs(rows)).toEqual(["shp_ret_before", "shp_ret_scanned", "shp_ret_today", "shp_ret_untracked"]);
    expect(rows.find((m) => m.reference === "shp_ret_today")?.ours).toEqual({
      voided: true,
      trackingNumber: "TRK-RET-TODAY",
      via: "return-label-refund-requested",
      refundStatus: "submitted",
    });
    expect(rows.find((m) => m.reference === "shp_ret_before")).toMatchObject({
      orderId: order,
      ours: { trackingNumber: "TRK-RET-BEFORE", refundStatus: "submitted" },
    });
    expect(rows.find((m) => m.reference === "shp_ret_untracked")?.ours).toMatchObject({
      trackingNumber: `return-${untracked}`,
      via: "return-label-refund-requested",
      refundStatus: "rejected",
    });
    expect(w.of(report, "label_without_shipment")).toEqual([]);
    expect(w.carrier.asked).not.toContain(`return-${today}`);
    // A return label kept without the carrier's id is not asked about by its reference.
    expect(w.carrier.asked).not.toContain(`return-${noId}`);
  });

  it("one label found by the day's pages and again as an earlier rejection is reported once", async () => {
    const w = world();
    const order = w.order("pi_voids", 5000);
    handedBack(w, order, "TRK-TWICE", { providerId: "shp_twice", ours: "rejected" });
    w.carrier.label({ id: "shp_twice", trackingCode: "TRK-TWICE", refundStatus: "rejected" });
    handedBack(w, order, "TRK-TWICE-OLD", { providerId: "shp_twice_old", ours: "rejected" });
    w.carrier.label(
      { id: "shp_twice_old", trackingCode: "TRK-TWICE-OLD", refundStatus: "rejected" },
      [],
      false,
    );
    // Bought on another day, handed back today and found again among the earlier rejections by
    // another lookup: the label's id keeps it to one row.
    w.db.insert("shipment", {
      orderId: order,
      providerId: "shp_twice_old",
      trackingNumber: "TRK-TWICE-ALIAS",
      labelRefundStatus: "rejected",
    });
    // Kept without the carrier's id, asked by its tracking number: the carrier answers the same label.
    w.db.insert("shipment", {
      orderId: order,
      providerId: null,
      trackingNumber: "TRK-TWICE-CODE",
      labelRefundStatus: "rejected",
    });
    w.carrier.byLookup.set("TRK-TWICE-CODE", defined(w.carrier.byLookup.get("shp_twice_old")));
    const report = await w.run();
    expect(refs(w.of(report, "void_not_refunded"))).toEqual(["shp_twice", "shp_twice_old"]);
    // The day's void bought another day is asked once, not again among the earlier rejections;
    // its alias is asked (another tracking number) and kept to one row by the label's id.
    expect(w.carrier.asked.filter((lookup) => lookup === "shp_twice_old")).toHaveLength(2);
    expect(w.carrier.asked.filter((lookup) => lookup === "shp_twice")).toHaveLength(1);
  });
});

/** A Checkout Session of one MUG line as the ledger reads it (expanded), with `tax` on the line. */
const session = (id: string, tax: number, fields: Record<string, unknown> = {}) =>
  ({
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
          price: { product: { id: "prod_mug", metadata: { sku: "MUG" } } },
        },
      ],
    },
    ...fields,
  }) as unknown as Stripe.Checkout.Session;
const recorded = (tax: number, line: Record<string, unknown> = {}) => ({
  currency: "usd",
  subtotal: 5000,
  shipping: 0,
  discount: 0,
  tax,
  total: 5000 + tax,
  shippingRate: null,
  lines: [
    {
      sku: "MUG",
      quantity: 5,
      amountSubtotal: 5000,
      amountDiscount: 0,
      amountTax: tax,
      amountTotal: 5000 + tax,
      ...line,
    },
  ],
});

describe("reconciliation, in memory: the recorded money breakdown", () => {
  it("breakdown_differs: each component and line that differs from Stripe's session, by a cent", async () => {
    const w = world();
    const taxed = w.order("pi_taxed", 5400, { checkoutSessionId: "cs_taxed", moneyBreakdown: recorded(400) });
    w.stripe.sessions.set("cs_taxed", session("cs_taxed", 401));
    w.stripe.charge("pi_taxed", 5400);
    // The twin: recorded as Stripe's session says.
    w.order("pi_agreed", 5400, { checkoutSessionId: "cs_agreed", moneyBreakdown: recorded(400) });
    w.stripe.sessions.set("cs_agreed", session("cs_agreed", 400));
    w.stripe.charge("pi_agreed", 5400);
    const report = await w.run();
    expect(w.of(report, "breakdown_differs")).toEqual([
      {
        kind: "breakdown_differs",
        orderId: taxed,
        reference: "ch_pi_taxed",
        ours: {
          checkoutSession: "cs_taxed",
          subtotal: 5000,
          shipping: 0,
          discount: 0,
          tax: 400,
          total: 5400,
        },
        theirs: { subtotal: 5000, shipping: 0, discount: 0, tax: 401, total: 5401 },
        detail: "The recorded tax, total, line MUG differ from Stripe's Checkout Session cs_taxed",
        link: `http://shop.test/ops/orders/${taxed}`,
      },
    ]);
  });

  it("each of a line's amounts, its quantity, and a line on one side only are told apart", async () => {
    const w = world();
    const cases: [string, Record<string, unknown>][] = [
      ["quantity", { quantity: 4 }],
      ["subtotal", { amountSubtotal: 4999 }],
      ["discount", { amountDiscount: 1 }],
      ["tax", { amountTax: 1 }],
      ["total", { amountTotal: 5001 }],
      // Tax 4005 and total 400 run together as tax 400 and total 5400 do ("4005400").
      ["runTogether", { amountTax: 4005, amountTotal: 400 }],
      ["sku", { sku: "ZED" }],
    ];
    for (const [name, line] of cases) {
      w.order(`pi_${name}`, 5400, { checkoutSessionId: `cs_${name}`, moneyBreakdown: recorded(400, line) });
      w.stripe.sessions.set(`cs_${name}`, session(`cs_${name}`, 400));
      w.stripe.charge(`pi_${name}`, 5400);
    }
    const report = await w.run();
    const details = Object.fromEntries(w.of(report, "breakdown_differs").map((m) => [m.reference, m.detail]));
    for (const name of ["quantity", "subtotal", "discount", "tax", "total", "runTogether"])
      expect(details[`ch_pi_${name}`]).toBe(
        `The recorded line MUG differ from Stripe's Checkout Session cs_${name}`,
      );
    expect(details.ch_pi_sku).toBe(
      "The recorded line MUG, line ZED differ from Stripe's Checkout Session cs_sku",
    );
  });

  it("a session Stripe does not have is reported; nothing recorded, or no session, is not compared", async () => {
    const w = world();
    const missing = w.order("pi_missing", 5400, {
      checkoutSessionId: "cs_missing",
      moneyBreakdown: recorded(400),
    });
    w.stripe.charge("pi_missing", 5400);
    w.order("pi_unrecorded", 5400, { checkoutSessionId: "cs_unrecorded" });
    w.stripe.sessions.set("cs_unrecorded", session("cs_unrecorded", 999));
    w.stripe.charge("pi_unrecorded", 5400);
    w.order("pi_sessionless", 5400, { moneyBreakdown: recorded(400) });
    w.stripe.charge("pi_sessionless", 5400);
    w.order("pi_linesless", 5400, { checkoutSessionId: "cs_linesless", moneyBreakdown: { tax: 1 } });
    w.stripe.sessions.set("cs_linesless", session("cs_linesless", 999));
    w.stripe.charge("pi_linesless", 5400);
    const report = await w.run();
    expect(w.of(report, "breakdown_differs")).toEqual([
      {
        kind: "breakdown_differs",
        orderId: missing,
        reference: "ch_pi_missing",
        ours: {
          checkoutSession: "cs_missing",
          subtotal: 5000,
          shipping: 0,
          discount: 0,
          tax: 400,
          total: 5400,
        },
        theirs: null,
        detail: "Stripe has no Checkout Session cs_missing for the recorded breakdown",
        link: `http://shop.test/ops/orders/${missing}`,
      },
    ]);
  });

  it("a ledger that cannot read sessions compares nothing; a capture that differs is still compared", async () => {
    const w = world();
    w.stripe.checkoutSession = undefined;
    w.order("pi_taxed", 5400, { checkoutSessionId: "cs_taxed", moneyBreakdown: recorded(400) });
    w.stripe.charge("pi_taxed", 5400);
    const report = await w.run();
    expect(report.mismatches).toEqual([]);
    const again = world();
    again.order("pi_differs", 5400, { checkoutSessionId: "cs_differs", moneyBreakdown: recorded(400) });
    again.stripe.sessions.set("cs_differs", session("cs_differs", 1));
    again.stripe.charge("pi_differs", 5300);
    const both = await again.run();
    expect(both.mismatches.map((m) => m.kind).sort()).toEqual(["breakdown_differs", "capture_differs"]);
  });
});

describe("reconciliation, in memory: the report, its alert and the shop's day", () => {
  it("saves the report and tells ops once per set of mismatches, keyed by the day and what is wrong", async () => {
    const w = world();
    w.stripe.charge("pi_nobody", 3000);
    const first = await w.run();
    expect(w.alerts).toEqual([
      {
        key: expect.stringMatching(new RegExp(`^reconciliation-${date}-[0-9a-f]{16}$`)),
        title: `Reconciliation of ${date}: 1 mismatch`,
        fields: {
          day: date,
          mismatches: 1,
          charge_without_order: 1,
          orders: 0,
          report: `http://shop.test/ops/reconciliation/${first.id}`,
          action: "Open the report; each row links the order or the Stripe object",
        },
      },
    ]);
    // The same findings again: the same key (the alerter keeps one).
    const again = await w.run();
    expect(again.id).toBe(first.id);
    expect(w.alerts[1]?.key).toBe(w.alerts[0]?.key);
    expect(w.db.tables.reconciliationRun).toHaveLength(1);
    expect(w.db.tables.reconciliationMismatch).toHaveLength(1);
    // More findings: another key, the report replaced under the same id.
    const order = w.order("pi_differs", 5000);
    w.stripe.charge("pi_differs", 4000);
    w.stock.push({ sku: "MUG", stockOnHand: 2, ledgerSum: 1 });
    const third = await w.run();
    expect(third.id).toBe(first.id);
    expect(third.mismatchCount).toBe(3);
    expect(third.counts).toEqual({ charge_without_order: 1, capture_differs: 1, stock_ledger_differs: 1 });
    expect(w.db.tables.reconciliationMismatch).toHaveLength(3);
    expect(w.alerts[2]).toMatchObject({
      title: `Reconciliation of ${date}: 3 mismatches`,
      fields: {
        mismatches: 3,
        charge_without_order: 1,
        capture_differs: 1,
        stock_ledger_differs: 1,
        orders: 1,
      },
    });
    expect(w.alerts[2]?.key).not.toBe(w.alerts[0]?.key);
    expect(await w.reconciliation.find(first.id)).toEqual(third);
    expect(order).toBeDefined();
  });

  it("the alert's key does not depend on the order the mismatches were found in", async () => {
    const keyOf = async (pages: string[][]) => {
      const w = world();
      w.stripe.pages = pages.map(() => []);
      for (const [index, page] of pages.entries()) {
        w.stripe.pages = [...w.stripe.pages.slice(0, index + 1)];
        for (const intent of page) w.stripe.charge(intent, 100);
        w.stripe.pages.push([]);
      }
      await w.run();
      return w.alerts[0]?.key;
    };
    expect(await keyOf([["pi_a"], ["pi_b"]])).toBe(await keyOf([["pi_b"], ["pi_a"]]));
    expect(await keyOf([["pi_a"]])).not.toBe(await keyOf([["pi_b"]]));
  });

  it("logs what the run found", async () => {
    const w = world();
    w.stripe.charge("pi_nobody", 3000);
    w.carrier.label({ id: "shp_orphan", trackingCode: "TRK-ORPHAN" });
    await w.run();
    expect(w.logs).toEqual([
      expect.objectContaining({
        component: "reconciliation",
        msg: "reconciliation finished",
        date,
        by: "cli",
        mismatches: 2,
        counts: { charge_without_order: 1, label_without_shipment: 1 },
        transactions: 1,
        carrierShipments: 1,
      }),
    ]);
  });

  it("a clean re-run empties the day's report and tells no one", async () => {
    const w = world();
    w.stock.push({ sku: "MUG", stockOnHand: 2, ledgerSum: 1 });
    const first = await w.run();
    w.stock.pop();
    const clean = await w.run();
    expect(clean).toMatchObject({ id: first.id, mismatchCount: 0, counts: {}, mismatches: [] });
    expect(w.db.tables.reconciliationMismatch).toEqual([]);
    expect(w.alerts).toHaveLength(1);
  });

  it("another day's report is left alone", async () => {
    const w = world();
    w.stock.push({ sku: "MUG", stockOnHand: 2, ledgerSum: 1 });
    const other = await w.reconciliation.run({ date: "2026-12-04", by: "cron" });
    w.stock.pop();
    await w.run();
    // The 4th has the stock row and the decoy's refund of that day, which Stripe does not have.
    expect(other.mismatchCount).toBe(2);
    expect(await w.reconciliation.find(other.id)).toEqual(other);
    expect(w.db.tables.reconciliationMismatch).toHaveLength(2);
  });

  it("find: a report by id; an unknown or malformed id is not found", async () => {
    const w = world();
    const report = await w.run();
    expect(await w.reconciliation.find(report.id)).toEqual(report);
    await expect(w.reconciliation.find(randomUUID())).rejects.toMatchObject({ code: "not_found" });
    await expect(w.reconciliation.find("not-a-uuid")).rejects.toMatchObject({
      code: "not_found",
      message: "Reconciliation run not-a-uuid does not exist",
    });
    await expect(w.reconciliation.find(undefined)).rejects.toMatchObject({ code: "not_found" });
  });

  it("list: the day's report, or the latest 31 days newest first", async () => {
    const w = world();
    // Run out of day order (every 7th day, 7 and 33 coprime), so neither stored order nor its
    // reverse is the days' order.
    for (let step = 1; step <= 33; step++) {
      const d = ((step * 7) % 33) + 1;
      const day = `2026-11-${String(d > 30 ? d - 30 : d).padStart(2, "0")}`;
      await w.reconciliation.run({ date: d > 30 ? day.replace("-11-", "-12-") : day, by: "cron" });
    }
    const all = await w.reconciliation.list({});
    expect(all).toHaveLength(31);
    expect(all[0]?.date).toBe("2026-12-03");
    expect(all[30]?.date).toBe("2026-11-03");
    expect(all.map((run) => run.date)).toEqual([...all.map((run) => run.date)].sort().reverse());
    expect(all[0]).not.toHaveProperty("mismatches");
    expect(await w.reconciliation.list({ date: "" })).toHaveLength(31);
    const one = await w.reconciliation.list({ date: "2026-11-15" });
    expect(one).toMatchObject([{ date: "2026-11-15", ranBy: "cron", timeZone: "UTC", mismatchCount: 0 }]);
    expect(one[0]?.reportUrl).toBe(`http://shop.test/ops/reconciliation/${one[0]?.id}`);
    expect(await w.reconciliation.list({ date: "2026-10-01" })).toEqual([]);
    await expect(w.reconciliation.list({ date: "2026-02-30" })).rejects.toMatchObject({
      code: "validation_failed",
    });
  });

  it("the day is the shop's: its bounds in the shop's time zone, today when no date is given", async () => {
    // 04:30 UTC on the 6th is still the 5th in New York (UTC-5).
    const w = world({ timeZone: "America/New_York", now: () => new Date("2026-12-06T04:30:00Z") });
    const order = w.order("pi_tz", 5000);
    w.recordRefund(order, "re_before", 10, { createdAt: new Date("2026-12-05T04:59:59.999Z") });
    w.recordRefund(order, "re_start", 20, { createdAt: new Date("2026-12-05T05:00:00Z") });
    w.recordRefund(order, "re_last", 30, { createdAt: new Date("2026-12-06T04:59:59.999Z") });
    w.recordRefund(order, "re_after", 40, { createdAt: new Date("2026-12-06T05:00:00Z") });
    const report = await w.reconciliation.run({ by: "cron" });
    expect(report).toMatchObject({ date: "2026-12-05", timeZone: "America/New_York", ranBy: "cron" });
    expect(w.stripe.days).toEqual([
      {
        date: "2026-12-05",
        timeZone: "America/New_York",
        start: new Date("2026-12-05T05:00:00Z"),
        end: new Date("2026-12-06T05:00:00Z"),
      },
    ]);
    expect(refs(w.of(report, "refund_not_at_stripe"))).toEqual(["re_last", "re_start"]);
    expect(w.stripe.openUntil).toEqual([new Date("2026-12-06T05:00:00Z")]);
    expect(report.timeZone).toBe(w.reconciliation.timeZone);
  });

  it("a date that is no calendar day changes nothing", async () => {
    const w = world();
    await expect(w.reconciliation.run({ date: "2026-13-01", by: "cli" })).rejects.toMatchObject({
      code: "validation_failed",
    });
    expect(w.db.tables.reconciliationRun).toEqual([]);
  });
});
