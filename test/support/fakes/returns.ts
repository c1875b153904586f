import type { ReturnWorkflowDependencies } from "../../../src/inngest/dependencies";
import { exchangeCharge, returnRefund, type ReturnCondition } from "../../../src/returns/return-policy";
import type { ReturnRow, ReturnStatus } from "../../../src/returns/return-records";
import type { ReturnWork } from "../../../src/returns/return-work";

/** A return row's columns that a new return has not set yet: every fake starts from them. */
export const unsetReturnFields = {
  requested_by: "customer",
  label_carrier: null,
  label_tracking_number: null,
  label_tracking_url: null,
  exchange_checkout_session_id: null,
  label_url: null,
  label_tracker_status: null,
  label_refund_status: null,
  label_sent_at: null,
  condition: null,
  received_at: null,
  refund_amount: null,
  refunded_at: null,
  restocked_at: null,
  written_off_at: null,
  closed_at: null,
  exchange_reserved_at: null,
  exchange_released_at: null,
  exchange_carrier: null,
  exchange_tracking_number: null,
  exchange_tracking_url: null,
  exchange_sent_at: null,
  exchange_charge_amount: null,
  exchange_charge_status: null,
  exchange_charge_intent_id: null,
  exchange_charge_error: null,
  exchange_charged_at: null,
  exchange_charge_refund_id: null,
  exchange_tracker_status: null,
} as const;

/**
 * process-return's port (src/returns/return-work.ts) in memory, for the fast tier: one return, its
 * stock and the money that moved, each method idempotent the way the real one is (by what the row
 * records), and a log of the side effects in the order they happened. The amounts come from the
 * real return policy. The parcel "arrives" while the run waits for it: the first read after the
 * label e-mail still finds it on its way, the next finds it received (as a tracker's delivery
 * between a read and the next would).
 */

export class FakeReturnWorld {
  readonly row: ReturnRow;
  /** Side effects, in order: `label`, `label-email`, `charge`, `reserve`, `ship`, … */
  readonly effects: string[] = [];
  readonly stock = new Map<string, number>();
  readonly timeline: string[] = [];
  readonly notices: string[] = [];
  /** Whether the carrier refuses to book the exchange's parcel (every attempt). */
  refuseExchangeParcel = false;
  /** What the bank says to the exchange's charge. */
  chargeAnswer: "charged" | "failed" | "awaiting_payment" = "charged";
  /**
   * With `chargeAnswer` awaiting_payment: what the customer does on the Checkout page. `paid`:
   * the payment is recorded before the second read; `never`: the page expires unpaid; `ended`:
   * ops end the return while the page is open.
   */
  checkout: "paid" | "never" | "ended" | "expired" = "paid";
  /** With `checkout` ended: the status ops end the return with. */
  endedAs: ReturnStatus = "rejected";
  /** The Checkout page's URL as Stripe answers it (null: a session without one). */
  checkoutUrl: string | null = "https://checkout.example/cs_1";
  /**
   * What the charge step answers when the return changed under it: `ended` (ops ended the return
   * before the charge) or `refunded` (ended after it, the charge given back). Unset: `chargeAnswer`.
   */
  chargeEnded?: "ended" | "refunded";
  /** Called on every read of the return (ops acting between two reads). */
  onRead?: (row: ReturnRow) => void;
  private paymentReads = 0;
  /** Whether the returned parcel arrives at all (false: every wait ends without it). */
  parcelArrives = true;
  condition: ReturnCondition = "resellable";
  private readsAfterLabel = 0;

  constructor(options: {
    status?: ReturnStatus;
    lines: {
      sku: string;
      quantity: number;
      unitPrice: number;
      exchangeSku?: string;
      exchangeUnitPrice?: number;
    }[];
    stock?: Record<string, number>;
  }) {
    this.row = {
      id: "00000000-0000-4000-8000-000000000001",
      order_id: "00000000-0000-4000-8000-0000000000aa",
      status: options.status ?? "approved",
      reason: "wrong_item",
      note: null,
      ...unsetReturnFields,
      exchange_delivered_at: null,
      lines: options.lines.map((line) => ({
        sku: line.sku,
        quantity: line.quantity,
        unitPrice: line.unitPrice,
        exchangeSku: line.exchangeSku ?? null,
        exchangeUnitPrice: line.exchangeUnitPrice ?? null,
      })),
    };
    for (const [sku, quantity] of Object.entries(options.stock ?? {})) this.stock.set(sku, quantity);
  }

  get returnId(): string {
    return this.row.id;
  }

  get orderId(): string {
    return this.row.order_id;
  }

  private move(sku: string, delta: number) {
    this.stock.set(sku, (this.stock.get(sku) ?? 0) + delta);
  }

  private exchanged() {
    return this.row.lines.flatMap((line) => (line.exchangeSku ? [{ ...line, sku: line.exchangeSku }] : []));
  }

  dependencies(exchangeShips: "on_receipt" | "at_once" = "on_receipt"): ReturnWorkflowDependencies {
    return {
      work: this.work(),
      waitSlice: "1d",
      waitSlices: 3,
      paymentSlice: "1d",
      paymentSlices: 1,
      exchangeShips,
    };
  }

  private work(): ReturnWork {
    const row = this.row;
    const now = () => new Date(0);
    const refundCharge = async () => {
      if (row.exchange_charge_status !== "charged") return { outcome: "not-charged" as const };
      if (row.exchange_tracking_number) return { outcome: "shipped" as const };
      row.exchange_charge_status = "refunded";
      row.exchange_charge_refund_id = "re_exchange";
      this.effects.push("charge-refund");
      this.timeline.push("exchange-charge-refunded");
      const amount = row.exchange_charge_amount ?? 0;
      return { outcome: "refunded" as const, amount, refundId: "re_exchange" };
    };
    return {
      load: async () => {
        this.onRead?.(row);
        if (row.label_sent_at && row.status === "approved" && this.parcelArrives) {
          this.readsAfterLabel += 1;
          if (this.readsAfterLabel > 1) {
            row.status = "received";
            row.condition = this.condition;
            row.received_at = now();
          }
        }
        return structuredClone(row);
      },
      isExchange: (r) => r.lines.some((line) => line.exchangeSku),
      buyLabel: async () => {
        if (row.label_tracking_number) return { trackingNumber: row.label_tracking_number, created: false };
        row.label_tracking_number = "RET-1";
        row.label_url = "https://labels.example/RET-1.png";
        this.effects.push("label");
        return { trackingNumber: "RET-1", created: true };
      },
      handBackLabel: async () => {
        if (!row.label_tracking_number) return { outcome: "no-label" as const };
        if (row.received_at) return { outcome: "used" as const };
        row.label_refund_status = "submitted";
        this.effects.push("label-hand-back");
        return { outcome: "submitted" as const };
      },
      emailLabel: async () => {
        if (!row.label_sent_at) this.effects.push("label-email");
        row.label_sent_at = now();
        return { status: "sent" as const };
      },
      refund: async () => {
        const refund = returnRefund(row.lines, { kind: "amount", amount: 0 });
        if (row.refunded_at === null) {
          row.refund_amount = refund.amount;
          row.refunded_at = now();
          this.effects.push(`refund:${refund.amount}`);
        }
        return { amount: refund.amount, fee: refund.fee, refundId: refund.amount > 0 ? row.id : null };
      },
      restock: async () => {
        if (row.restocked_at) return { movements: [] };
        row.restocked_at = now();
        for (const line of row.lines) this.move(line.sku, line.quantity);
        this.effects.push("restock");
        return {
          movements: row.lines.map((line) => ({ sku: line.sku, delta: line.quantity, stockAfter: 0 })),
        };
      },
      writeOff: async () => {
        const written = row.written_off_at === null;
        if (written) this.effects.push("write-off");
        row.written_off_at ??= now();
        return { writtenOff: written };
      },
      close: async () => {
        if (row.status === "received") {
          row.status = "closed";
          this.effects.push("close");
        }
        return { status: row.status };
      },
      reserveExchange: async () => {
        if (row.exchange_reserved_at) return { movements: [] };
        row.exchange_reserved_at = now();
        for (const line of this.exchanged()) this.move(line.sku, -line.quantity);
        this.effects.push("reserve");
        return {
          movements: this.exchanged().map((l) => ({ sku: l.sku, delta: -l.quantity, stockAfter: 0 })),
        };
      },
      releaseExchange: async () => {
        if (!row.exchange_reserved_at || row.exchange_released_at || row.exchange_tracking_number)
          return { movements: [] };
        row.exchange_released_at = now();
        for (const line of this.exchanged()) this.move(line.sku, line.quantity);
        this.effects.push("release");
        this.timeline.push("exchange-released");
        return {
          movements: this.exchanged().map((l) => ({ sku: l.sku, delta: l.quantity, stockAfter: 0 })),
        };
      },
      chargeExchange: async () => {
        if (this.chargeEnded === "ended")
          return { outcome: "ended" as const, amount: exchangeCharge(row.lines) };
        if (this.chargeEnded === "refunded")
          return {
            outcome: "refunded" as const,
            amount: exchangeCharge(row.lines),
            refund: { outcome: "not-charged" as const },
          };
        if (row.exchange_charge_status === "failed")
          return { outcome: "failed" as const, amount: row.exchange_charge_amount ?? 0 };
        if (row.exchange_charge_status)
          return {
            outcome: "charged" as const,
            amount: row.exchange_charge_amount ?? 0,
            paymentIntentId: row.exchange_charge_intent_id,
          };
        const amount = exchangeCharge(row.lines);
        if (amount <= 0) return { outcome: "none" as const, amount: 0 };
        row.exchange_charge_amount = amount;
        row.exchange_charge_intent_id = "pi_exchange";
        row.exchange_charge_status = this.chargeAnswer;
        this.effects.push(`charge:${amount}:${this.chargeAnswer}`);
        if (this.chargeAnswer === "awaiting_payment") {
          this.timeline.push("exchange-charge-failed");
          return { outcome: "awaiting-payment" as const, amount };
        }
        if (this.chargeAnswer === "failed") {
          this.timeline.push("exchange-charge-failed");
          this.notices.push("exchange-charge-failed");
          return { outcome: "failed" as const, amount };
        }
        return { outcome: "charged" as const, amount, paymentIntentId: "pi_exchange" };
      },
      refundExchangeCharge: () => refundCharge(),
      shipExchange: async () => {
        if (row.exchange_tracking_number)
          return { trackingNumber: row.exchange_tracking_number, created: false };
        if (this.refuseExchangeParcel) throw new Error("EasyPost: 500 Internal Server Error");
        row.exchange_tracking_number = "EXC-1";
        this.effects.push("ship");
        return { trackingNumber: "EXC-1", created: true };
      },
      emailExchange: async () => {
        if (!row.exchange_sent_at) this.effects.push("exchange-email");
        row.exchange_sent_at = now();
        return { status: "sent" as const };
      },
      expire: async () => {
        if (row.status === "requested" || row.status === "approved") {
          row.status = "cancelled";
          this.effects.push("expire");
        }
        return { status: row.status };
      },
      // The Checkout page for a difference the bank wants the customer present for: the fake's
      // charge never answers awaiting-payment, so the fast tier never gets here.
      createExchangeCheckout: async () => {
        this.effects.push("checkout");
        return {
          checkoutSessionId: "cs_1",
          url: this.checkoutUrl,
          expiresAt: "1970-01-02T00:00:00.000Z",
        };
      },
      emailExchangeCheckout: async (_returnId, _runId, url) => {
        this.effects.push(`checkout-email:${url}`);
        return { status: "sent" as const };
      },
      exchangePaymentState: async () => {
        this.paymentReads += 1;
        if (this.paymentReads > 1 && row.exchange_charge_status === "awaiting_payment") {
          if (this.checkout === "paid") row.exchange_charge_status = "charged";
          if (this.checkout === "ended") row.status = this.endedAs;
          // The webhook recorded the page expired before the run looked again.
          if (this.checkout === "expired") row.exchange_charge_status = "unpaid";
        }
        return { charge: row.exchange_charge_status, status: row.status };
      },
      settleExchangeCheckout: async () => ({ outcome: "not-ours" as const }),
      readExchangeCheckout: () => Promise.reject(new Error("no exchange Checkout in the fast tier")),
      expireExchangeCheckout: async () => {
        this.effects.push("checkout-expire");
        return { outcome: "unpaid" as const };
      },
      closeUnpaidExchange: async () => {
        row.exchange_charge_status = "unpaid";
        this.effects.push("close-unpaid");
        return { status: row.status };
      },
      failExchange: async (_returnId, _runId, reason) => {
        this.timeline.push("exchange-failed");
        this.notices.push("exchange-failed");
        return {
          returnId: row.id,
          reason,
          released: row.exchange_released_at !== null,
          chargeStatus: row.exchange_charge_status,
        };
      },
    };
  }
}

/** A transition the desk was asked for, as the use cases called it. */
export interface TransitionCall {
  returnId: string;
  from: ReturnStatus[];
  to: ReturnStatus;
  fields: { condition?: ReturnCondition; by?: string; note?: string | undefined; entry?: DeskEntry };
}

export interface DeskEntry {
  kind: string;
  detail: Record<string, unknown>;
}

/**
 * The request use cases' ports (src/returns/returns.ts: the records' get, create, transition and
 * listOpen, the publisher, the timeline) in memory, for their fast tier. `transition` moves a return
 * only from one of the statuses it is given, as the real conditional UPDATE does (null otherwise),
 * and writes its `entry` only when it moved; `create` records what it was asked and refuses with
 * `refuseCreate` when set (the real one checks the order under its lock); the publisher keeps every
 * event and throws `publishError` when set. `beforeTransition` runs just before a move is tried
 * (someone else moving the return between the use case's read and its write).
 */
export class FakeReturnDesk {
  readonly rows = new Map<string, ReturnRow>();
  /** What `create` was asked, in order. */
  readonly created: NewReturnAsked[] = [];
  readonly transitions: TransitionCall[] = [];
  readonly published: { name: string; id: string; data: Record<string, unknown> }[] = [];
  /** Timeline entries: the use cases' own and those written by a transition's statement. */
  readonly entries: (DeskEntry & { orderId: string; via: "timeline" | "transition" })[] = [];
  /** `listOpen`'s limits, as asked. */
  readonly openLimits: number[] = [];
  refuseCreate?: Error;
  publishError?: Error;
  beforeTransition?: (row: ReturnRow) => void;
  /** The next move misses with the row left as it is (a move by someone else, undone since). */
  missNextTransition = false;
  private sequence = 0;

  constructor(readonly clock = new Date("2026-12-07T10:00:00.000Z")) {}

  /** A stored return: the fake's new rows, or one staged in any state. */
  put(overrides: Partial<ReturnRow> = {}): ReturnRow {
    this.sequence += 1;
    const row: ReturnRow = {
      id: `00000000-0000-4000-8000-${String(this.sequence).padStart(12, "0")}`,
      order_id: "00000000-0000-4000-8000-0000000000aa",
      status: "approved",
      reason: "wrong_item",
      note: null,
      ...unsetReturnFields,
      exchange_delivered_at: null,
      lines: [{ sku: "TEE-M", quantity: 1, unitPrice: 2500, exchangeSku: null, exchangeUnitPrice: null }],
      ...overrides,
    };
    this.rows.set(row.id, row);
    return structuredClone(row);
  }

  statusOf(returnId: string): ReturnStatus | undefined {
    return this.rows.get(returnId)?.status;
  }

  records() {
    return {
      get: async (returnId: string) => {
        const row = this.rows.get(returnId);
        return row ? structuredClone(row) : null;
      },
      create: async (request: NewReturnAsked) => {
        this.created.push(structuredClone(request));
        if (this.refuseCreate) throw this.refuseCreate;
        return this.put({
          order_id: request.orderId,
          status: request.approved ? "approved" : "requested",
          reason: request.reason,
          note: request.note ?? null,
          requested_by: request.requestedBy,
          lines: request.lines.map((line) => ({
            sku: line.sku,
            quantity: line.quantity,
            unitPrice: 2500,
            exchangeSku: line.exchangeSku ?? null,
            exchangeUnitPrice: line.exchangeSku ? 2500 : null,
          })),
        });
      },
      transition: async (
        returnId: string,
        from: readonly ReturnStatus[],
        to: ReturnStatus,
        fields: TransitionCall["fields"] = {},
      ) => {
        this.transitions.push({ returnId, from: [...from], to, fields: structuredClone(fields) });
        const row = this.rows.get(returnId);
        if (row) this.beforeTransition?.(row);
        const missed = this.missNextTransition;
        this.missNextTransition = false;
        if (!row || missed || !from.includes(row.status)) return null;
        row.status = to;
        if (fields.condition) row.condition = fields.condition;
        if (to === "received") row.received_at = this.clock;
        if (to === "closed" || to === "rejected" || to === "cancelled") row.closed_at = this.clock;
        if (fields.entry)
          this.entries.push({
            orderId: row.order_id,
            kind: fields.entry.kind,
            detail: JSON.parse(JSON.stringify(fields.entry.detail)) as Record<string, unknown>,
            via: "transition",
          });
        return structuredClone(row);
      },
      listOpen: async (limit: number) => {
        this.openLimits.push(limit);
        return [...this.rows.values()]
          .filter((row) => ["requested", "approved", "received"].includes(row.status))
          .slice(0, limit)
          .map((row) => structuredClone(row));
      },
    };
  }

  publisher() {
    return {
      publish: async (event: { name: string; id: string; data: Record<string, unknown> }) => {
        if (this.publishError) throw this.publishError;
        this.published.push(structuredClone(event));
      },
    };
  }

  timeline() {
    return {
      record: async (orderId: string, kind: string, detail: Record<string, unknown> = {}) => {
        this.entries.push({
          orderId,
          kind,
          detail: JSON.parse(JSON.stringify(detail)) as Record<string, unknown>,
          via: "timeline",
        });
      },
    };
  }
}

/** What the request use case hands the records' `create` (src/returns/records/rows.ts's NewReturn). */
export interface NewReturnAsked {
  orderId: string;
  lines: readonly { sku: string; quantity: number; exchangeSku?: string | undefined }[];
  reason: string;
  note?: string | undefined;
  requestedBy: string;
  approved: boolean;
  windowMs: number;
  now: Date;
}
