import type { OpsNotice } from "../../../src/alerts";
import type { SendEmailRequest } from "../../../src/notifications/email-sender";
import { createReturnWork } from "../../../src/inngest/steps/return-work";
import { createRefunds } from "../../../src/orders/refund-order";
import type { ReturnRecords, ReturnRow, ReturnStatus } from "../../../src/returns/return-records";
import { createWorkContext, type ReturnWorkDeps } from "../../../src/returns/return-work";
import { defined } from "../defined";
import { captureLog } from "../log-capture";
import { MoneyDb } from "./money-db";
import { MoneyStripe } from "./money-stripe";
import { unsetReturnFields } from "./returns";

/**
 * The return steps' ports in memory (src/returns/work/context.ts's ReturnWorkDeps): the return's
 * records as their SQL keeps them (each write once, by what the row records), a carrier, a mail
 * server, a card gateway, and the real refund use case on the in-memory database and Stripe
 * (money-db.ts, money-stripe.ts). For the steps' own work, called directly (decision 0015).
 */
export const runId = "run-1";
export const address = {
  name: "Ada",
  line1: "1 Main St",
  city: "Springfield",
  postalCode: "12345",
  country: "US",
};

/** The return's records as the SQL keeps them: each write lands once, by what the row records. */
export class FakeRecords {
  readonly writes: string[] = [];
  destinationAnswer: { shipping_address: unknown; weights: Record<string, number | null> | null } | null = {
    shipping_address: address,
    weights: { MUG: 12 },
  };
  /** Runs after the label is recorded (a close landing while the label was bought). */
  afterLabel?: () => void;
  constructor(readonly row: ReturnRow) {}

  /** The card saved at checkout (null: none). */
  card: { stripe_customer_id: string | null; payment_method_id: string | null; currency: string } | null = {
    stripe_customer_id: "cus_1",
    payment_method_id: "pm_1",
    currency: "USD ",
  };
  /** Runs after the exchange's charge or parcel is recorded (ops ending the return meanwhile). */
  afterExchange?: () => void;

  async savedCard() {
    return this.card === null ? null : { email: "buyer@example.com", ...this.card };
  }
  async recordExchangeCharge(
    returnId: string,
    charge: { amount: number; status: string; paymentIntentId: string | null; error?: string | undefined },
  ) {
    if (this.row.exchange_charge_status !== null) return false;
    this.writes.push(`exchange-charge ${charge.status} ${charge.amount}`);
    Object.assign(this.row, {
      exchange_charge_amount: charge.amount,
      exchange_charge_status: charge.status,
      exchange_charge_intent_id: charge.paymentIntentId,
      exchange_charge_error: charge.error ?? null,
    });
    this.afterExchange?.();
    return true;
  }
  async recordExchangeChargeRefund(returnId: string, refundId: string) {
    if (this.row.exchange_charge_status !== "charged") return false;
    this.writes.push(`exchange-charge-refund ${refundId}`);
    Object.assign(this.row, { exchange_charge_status: "refunded", exchange_charge_refund_id: refundId });
    return true;
  }
  async reserveExchange(returnId: string, run: string | null) {
    if (this.row.exchange_reserved_at) return [];
    this.row.exchange_reserved_at = new Date();
    this.writes.push(`reserve ${run}`);
    return this.row.lines.flatMap((line) =>
      line.exchangeSku ? [{ sku: line.exchangeSku, delta: -line.quantity }] : [],
    );
  }
  async releaseExchange(returnId: string, run: string | null) {
    if (!this.row.exchange_reserved_at || this.row.exchange_released_at || this.row.exchange_tracking_number)
      return [];
    this.row.exchange_released_at = new Date();
    this.writes.push(`release ${run}`);
    return this.row.lines.flatMap((line) =>
      line.exchangeSku ? [{ sku: line.exchangeSku, delta: line.quantity }] : [],
    );
  }
  async recordExchangeShipment(
    returnId: string,
    booking: { trackingNumber: string; carrier: string; trackingUrl: string },
  ) {
    this.writes.push(`exchange-label ${booking.trackingNumber}`);
    Object.assign(this.row, {
      exchange_tracking_number: booking.trackingNumber,
      exchange_carrier: booking.carrier,
      exchange_tracking_url: booking.trackingUrl,
    });
    this.afterExchange?.();
  }
  async markExchangeSent() {
    this.writes.push("exchange-sent");
    this.row.exchange_sent_at = new Date();
  }

  async get(returnId: string): Promise<ReturnRow | null> {
    return returnId === this.row.id ? structuredClone(this.row) : null;
  }
  async destination() {
    return this.destinationAnswer;
  }
  async recordLabel(
    returnId: string,
    booking: { trackingNumber: string; carrier: string; trackingUrl: string; labelUrl?: string | null },
  ) {
    this.writes.push(`label ${booking.trackingNumber}`);
    Object.assign(this.row, {
      label_tracking_number: booking.trackingNumber,
      label_carrier: booking.carrier,
      label_tracking_url: booking.trackingUrl,
      label_url: booking.labelUrl ?? null,
    });
    this.afterLabel?.();
  }
  async recordLabelRefund(returnId: string, status: string) {
    this.writes.push(`label-refund ${status}`);
    this.row.label_refund_status = status;
  }
  async markLabelSent() {
    this.writes.push("label-sent");
    this.row.label_sent_at = new Date();
  }
  async recordRefund(returnId: string, amount: number, fee: number) {
    this.writes.push(`refund ${amount} fee ${fee}`);
    this.row.refund_amount = amount;
    this.row.refunded_at = new Date();
  }
  async restock(returnId: string, run: string | null) {
    if (this.row.restocked_at) return [];
    this.row.restocked_at = new Date();
    this.writes.push(`restock ${run}`);
    return this.row.lines.map((line) => ({ sku: line.sku, quantity: line.quantity }));
  }
  async writeOff() {
    if (this.row.written_off_at) return false;
    this.row.written_off_at = new Date();
    return true;
  }
  async transition(
    returnId: string,
    from: readonly ReturnStatus[],
    to: ReturnStatus,
    fields: { note?: string } = {},
  ) {
    if (!from.includes(this.row.status)) return null;
    this.writes.push(`${to}${fields.note ? ` (${fields.note})` : ""}`);
    this.row.status = to;
    return structuredClone(this.row);
  }
}

export function returnRow(orderId: string, fields: Partial<ReturnRow> = {}): ReturnRow {
  return {
    id: "00000000-0000-4000-8000-0000000000r1".replace("r1", "01"),
    order_id: orderId,
    status: "approved",
    reason: "wrong_item",
    note: null,
    ...unsetReturnFields,
    exchange_delivered_at: null,
    lines: [{ sku: "MUG", quantity: 1, unitPrice: 3000, exchangeSku: null, exchangeUnitPrice: null }],
    ...fields,
  };
}

export function returnStepsWorld(
  options: { captured?: number; row?: Partial<ReturnRow>; fee?: ReturnWorkDeps["fee"] } = {},
) {
  const db = new MoneyDb();
  const stripe = new MoneyStripe();
  const captured = options.captured ?? 5000;
  const order = db.addOrder({ captured, status: "delivered" });
  const intent = stripe.addIntent(defined(order.paymentIntentId), { captured });
  const records = new FakeRecords(returnRow(order.id, options.row));
  const entries: { orderId: string; kind: string; detail: Record<string, unknown>; key?: string }[] = [];
  const notices: OpsNotice[] = [];
  const sent: SendEmailRequest[] = [];
  /** The card gateway: the off-session charge answers `chargeAnswer` (an error is thrown). */
  const payments = {
    charges: [] as { charge: Record<string, unknown>; key: string }[],
    refunds: [] as { paymentIntentId: string; key: string }[],
    chargeAnswer: null as Error | null,
    refundAnswer: null as Error | null,
    async chargeOffSession(charge: Record<string, unknown>, key: string) {
      this.charges.push({ charge, key });
      if (this.chargeAnswer) throw this.chargeAnswer;
      return {
        paymentIntentId: "pi_exchange",
        amount: charge.amount as number,
        currency: "usd",
        replayed: false,
      };
    },
    async refundInFull(paymentIntentId: string, key: string) {
      this.refunds.push({ paymentIntentId, key });
      if (this.refundAnswer) throw this.refundAnswer;
      return { paymentIntentId, refundId: "re_exchange", amountRefunded: 700 };
    },
  };
  const labels = {
    bought: [] as unknown[],
    handedBack: [] as unknown[][],
    handBackAnswer: "submitted" as string,
    async buy(request: unknown) {
      this.bought.push(request);
      return {
        carrier: "USPS",
        trackingNumber: "RT1",
        trackingUrl: "https://track/RT1",
        labelUrl: "https://label/RT1",
      };
    },
    shipped: [] as unknown[],
    async shipExchange(request: unknown) {
      this.shipped.push(request);
      return { carrier: "UPS", trackingNumber: "EX1", trackingUrl: "https://track/EX1" };
    },
    async handBack(...args: unknown[]) {
      this.handedBack.push(args);
      return this.handBackAnswer;
    },
  };
  const alerts = { notify: async (notice: OpsNotice) => void notices.push(notice) };
  /** The orders whose shipping label a full refund handed back (refund-order's onFullRefund). */
  const labelVoids: string[] = [];
  const refunds = createRefunds({
    onFullRefund: async (orderId) => void labelVoids.push(orderId),
    db: db.asDatabase(),
    stripe: stripe.asStripe(),
    sender: { send: async () => ({ status: "sent" }) } as never,
    logger: captureLog().logger,
    alerts,
  });
  const deps = {
    db: db.asDatabase(),
    records: records as unknown as ReturnRecords,
    labels: labels as never,
    refunds,
    payments,
    sender: {
      async send(request: SendEmailRequest) {
        sent.push(request);
        return { status: "sent" };
      },
    } as never,
    timeline: {
      record: async (orderId: string, kind: string, detail: Record<string, unknown> = {}, key?: string) =>
        void entries.push({ orderId, kind, detail, key }),
    },
    alerts,
    fee: options.fee ?? { kind: "percent", percent: 10 },
    orderUrl: (orderId: string) => `https://shop/orders/${orderId}`,
    trackUrl: (trackingNumber: string) => `https://carrier/${trackingNumber}`,
  } as unknown as ReturnWorkDeps;
  const ctx = createWorkContext(deps);
  /** The work as production builds it (src/inngest/steps/return-work.ts): the port the steps call. */
  const work = createReturnWork(deps);
  const returnId = records.row.id;
  const kinds = () => entries.map((e) => e.kind);
  const payment = () => defined(db.tables.payment?.find((row) => row.orderId === order.id));
  return {
    payments,
    db,
    stripe,
    intent,
    order,
    records,
    entries,
    notices,
    sent,
    labels,
    ctx,
    work,
    labelVoids,
    returnId,
    kinds,
    payment,
  };
}
