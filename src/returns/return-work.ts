import type { Alerter } from "../alerts";
import { isAppError } from "../errors";
import { PaymentRejectedError, type PaymentGateway } from "../payments/payment-gateway";
import type { EmailSender } from "../notifications/email-sender";
import { emailTemplates, toOrderSummary } from "../notifications/templates";
import type { Refunds } from "../orders/refund-order";
import { disputedRefundAlertKey } from "../orders/disputed-amount";
import { parseStoredAddress } from "../shipping/shipping-destinations";
import type { ReturnLabels } from "../shipping/return-labels";
import type { Timeline } from "../timeline/timeline";
import type { Database } from "../db/client";
import { exchangeCharge, returnRefund, type RestockingFee } from "./return-policy";
import type { ReturnRecords, ReturnRow } from "./return-records";
import type { ExchangeCheckouts, ExchangeCheckoutView } from "../payments/exchange-checkout";

/** The return label e-mail's key: one per return, whatever retries. */
export const returnLabelEmailKey = (returnId: string) => `return-label-${returnId}`;
/** The exchange's tracking e-mail's key. */
export const exchangeEmailKey = (returnId: string) => `exchange-shipped-${returnId}`;
/** The Stripe idempotency key of a dearer exchange's one off-session charge, whatever retries or re-drives. */
export const exchangeChargeKey = (returnId: string) => `exchange-charge-${returnId}`;
/** The Stripe idempotency key of the undo's refund of that charge. */
export const exchangeChargeRefundKey = (returnId: string) => `exchange-charge-refund-${returnId}`;
/** The e-mail telling the customer the difference was refused. */
export const exchangeChargeFailedEmailKey = (returnId: string) => `exchange-charge-failed-${returnId}`;
/** The e-mail carrying the Checkout page's URL for the difference. */
export const exchangeCheckoutEmailKey = (returnId: string) => `exchange-checkout-${returnId}`;
/** The Stripe idempotency key of the refund of a Checkout payment that came too late. */
export const exchangeCheckoutRefundKey = (returnId: string) => `exchange-checkout-refund-${returnId}`;

/** Stripe keeps a Checkout Session payable 30 minutes to 24 hours after its creation. */
const checkoutLifetime = { minMs: 31 * 60_000, maxMs: 23 * 3600_000 };

/** A return ops ended (or that expired): nothing more is charged or shipped for it. */
const endedStatuses: readonly string[] = ["rejected", "closed", "cancelled"];

/** Tracker statuses before the carrier has the parcel: an unused label can still be handed back. */
const unscanned = new Set([null, "unknown", "pre_transit"]);

/**
 * What process-return's steps do, one method per side effect, each idempotent by a key you can
 * name: the label by its reference `return-<returnId>` (and the recorded tracking number), the
 * e-mail by `return-label-<returnId>`, the refund by its row id, the return's own id (Stripe key
 * `refund-<returnId>`), the restock and write-off by the return's `restocked_at`/`written_off_at`.
 */
export function createReturnWork(deps: {
  db: Database;
  records: ReturnRecords;
  labels: ReturnLabels;
  refunds: Pick<Refunds, "refund">;
  /** The exchange's off-session charge of the difference, and its refund. */
  payments: Pick<PaymentGateway, "chargeOffSession" | "refundInFull">;
  sender: EmailSender;
  timeline: Pick<Timeline, "record">;
  alerts: Pick<Alerter, "notify">;
  fee: RestockingFee;
  /**
   * Stripe Checkout for a difference the bank refused with authentication_required, and how
   * long the customer has to pay it (EXCHANGE_PAYMENT_WINDOW). Absent: such a refusal is left to
   * ops like a decline.
   */
  checkouts?: { sessions: ExchangeCheckouts; windowMs: number };
  orderUrl(orderId: string): string;
  trackUrl(trackingNumber: string): string;
}) {
  const { records, timeline } = deps;

  const load = async (returnId: string): Promise<ReturnRow> => {
    const row = await records.get(returnId);
    if (!row) throw new Error(`Return ${returnId} does not exist`);
    return row;
  };

  /**
   * The exchange's own payment is charged back: Stripe refuses its refund, and the cardholder gets
   * the money through the dispute. Said on the timeline and to ops once per payment; nothing retried.
   */
  const refundRefusedAsDisputed = async (row: ReturnRow, paymentIntentId: string, runId: string | null) => {
    await timeline.record(
      row.order_id,
      "return-refund-withheld",
      { returnId: row.id, paymentIntentId, exchange: true, reason: "charge_disputed" },
      runId ?? undefined,
    );
    await deps.alerts.notify({
      key: disputedRefundAlertKey(paymentIntentId),
      title: "Refund refused: the payment is disputed",
      fields: {
        orderId: row.order_id,
        returnId: row.id,
        paymentIntentId,
        action:
          "The exchange's payment is charged back: refund nothing outside the dispute; answer or accept it in the Stripe Dashboard, then close the return",
      },
    });
    return { outcome: "disputed" as const };
  };
  const isDisputed = (error: unknown) => isAppError(error) && error.code === "charge_disputed";

  /** The undo of the exchange charge (see refundExchangeCharge below). */
  const refundCharge = async (returnId: string, runId: string) => {
    const row = await load(returnId);
    const intentId = row.exchange_charge_intent_id;
    if (row.exchange_charge_status !== "charged" || !intentId) return { outcome: "not-charged" as const };
    if (row.exchange_tracking_number) return { outcome: "shipped" as const };
    let refund;
    try {
      refund = await deps.payments.refundInFull(intentId, exchangeChargeRefundKey(returnId));
    } catch (error) {
      if (isDisputed(error)) return refundRefusedAsDisputed(row, intentId, runId);
      throw error;
    }
    if (await records.recordExchangeChargeRefund(returnId, refund.refundId)) {
      await timeline.record(
        row.order_id,
        "exchange-charge-refunded",
        {
          returnId,
          amount: refund.amountRefunded,
          paymentIntentId: row.exchange_charge_intent_id,
          refundId: refund.refundId,
        },
        runId,
      );
    }
    return { outcome: "refunded" as const, amount: refund.amountRefunded, refundId: refund.refundId };
  };

  /** The new items an exchange asks for, by name, and the order they belong to. */
  const exchangeLines = async (row: ReturnRow) => {
    const order = await deps.db.order.findUniqueOrThrow({
      where: { id: row.order_id },
      include: { lines: { orderBy: { sku: "asc" } } },
    });
    const wanted = row.lines.flatMap((line) => (line.exchangeSku ? [line.exchangeSku] : []));
    const products = await deps.db.product.findMany({
      where: { sku: { in: wanted } },
      select: { sku: true, name: true },
    });
    const names = new Map(products.map((product) => [product.sku, product.name]));
    const lines = row.lines.flatMap((line) =>
      line.exchangeSku
        ? [{ name: names.get(line.exchangeSku) ?? line.exchangeSku, quantity: line.quantity }]
        : [],
    );
    return { order, lines };
  };

  /**
   * A paid Checkout Session for a return's difference, from the webhook or the run's expiry:
   * while the charge awaits it, it becomes the exchange's charge, once; paid on a return whose
   * exchange was closed unpaid or ended meanwhile, it is refunded in full, once (key
   * `exchange-checkout-refund-<returnId>`).
   */
  const settleCheckout = async (view: ExchangeCheckoutView, runId: string | null) => {
    if (!view.returnId) return { outcome: "not-ours" as const };
    const row = await records.get(view.returnId);
    if (!row || row.exchange_checkout_session_id !== view.id) return { outcome: "not-ours" as const };
    if (!view.paid || !view.paymentIntentId) return { outcome: "not-paid" as const, row };
    const paid = { paymentIntentId: view.paymentIntentId, amount: view.amount };
    if (await records.recordExchangeCheckoutPaid(row.id, paid)) {
      await timeline.record(
        row.order_id,
        "exchange-charged",
        { returnId: row.id, ...paid, currency: view.currency, checkoutSessionId: view.id },
        runId ?? undefined,
      );
      return { outcome: "charged" as const, first: true, row };
    }
    const now = await load(row.id);
    if (now.exchange_charge_intent_id === view.paymentIntentId) {
      // This payment again (Stripe redelivers): the charge it became, or the refund it got.
      if (now.exchange_charge_status === "charged")
        return { outcome: "charged" as const, first: false, row: now };
      if (now.exchange_charge_status === "refunded") return { outcome: "refunded" as const, row: now };
    }
    if (now.exchange_charge_status !== "awaiting_payment" && now.exchange_charge_status !== "unpaid")
      return { outcome: "not-ours" as const };
    let refund;
    try {
      refund = await deps.payments.refundInFull(view.paymentIntentId, exchangeCheckoutRefundKey(row.id));
    } catch (error) {
      if (!isDisputed(error)) throw error;
      await refundRefusedAsDisputed(now, view.paymentIntentId, runId);
      return { outcome: "not-ours" as const };
    }
    if (
      await records.recordLateExchangePaymentRefund(row.id, {
        ...paid,
        refundId: refund.refundId,
      })
    ) {
      await timeline.record(
        row.order_id,
        "exchange-charge-refunded",
        { returnId: row.id, ...paid, refundId: refund.refundId, late: true },
        runId ?? undefined,
      );
      await deps.alerts.notify({
        key: `exchange-late-payment-${row.id}`,
        title: "Exchange paid after it was closed: the payment was refunded",
        fields: { orderId: row.order_id, returnId: row.id, amount: view.amount, refundId: refund.refundId },
      });
    }
    return { outcome: "refunded" as const, row: now };
  };

  /** What a refused exchange charge tells: the timeline, ops, and the customer once. */
  const chargeFailed = async (row: ReturnRow, amount: number, error: PaymentRejectedError, runId: string) => {
    const { order, lines } = await exchangeLines(row);
    const reason = error.reason === "authentication_required" ? "authentication_required" : "declined";
    const detail = {
      returnId: row.id,
      amount,
      reason,
      message: error.message,
      paymentIntentId: error.paymentIntentId,
      lines,
    };
    await timeline.record(row.order_id, "exchange-charge-failed", detail, runId);
    await deps.alerts.notify({
      key: `exchange-charge-failed-${row.id}`,
      title: "Exchange not shipped: the difference could not be charged",
      fields: {
        orderId: row.order_id,
        returnId: row.id,
        amount,
        reason: error.message,
        action:
          "The customer was e-mailed; settle with them (another card, or a refund instead), then close the return",
      },
    });
    const sent = await deps.sender.send({
      idempotencyKey: exchangeChargeFailedEmailKey(row.id),
      orderId: row.order_id,
      template: "exchangeChargeFailed",
      to: order.email,
      content: emailTemplates.exchangeChargeFailed({
        order: toOrderSummary(order, deps.orderUrl(order.id)),
        lines,
        amount,
        reason,
      }),
    });
    return sent.status;
  };

  return {
    load,

    async buyLabel(returnId: string, runId: string) {
      const row = await load(returnId);
      if (row.label_tracking_number) {
        return { trackingNumber: row.label_tracking_number, created: false };
      }
      const destination = await records.destination(returnId);
      const address = parseStoredAddress(destination?.shipping_address);
      if (!address) throw new Error(`Order ${row.order_id} has no address to send a return label from`);
      const booking = await deps.labels.buy({
        returnId,
        address,
        lines: row.lines.map((line) => ({ ...line, weightOz: destination?.weights?.[line.sku] ?? null })),
      });
      await records.recordLabel(returnId, booking);
      await timeline.record(
        row.order_id,
        "return-label-created",
        { returnId, trackingNumber: booking.trackingNumber, carrier: booking.carrier },
        runId,
      );
      return { trackingNumber: booking.trackingNumber, created: true };
    },

    /**
     * The undo of the label: handed back to the carrier while no scan shows it used. A used label
     * (the parcel moved, or arrived) is kept and paid for, as the carrier bills it.
     */
    async handBackLabel(returnId: string, runId: string) {
      const row = await load(returnId);
      if (!row.label_tracking_number) return { outcome: "no-label" as const };
      if (row.received_at || !unscanned.has(row.label_tracker_status)) return { outcome: "used" as const };
      const status = await deps.labels.handBack(returnId);
      if (status !== "not-found") await records.recordLabelRefund(returnId, status);
      await timeline.record(row.order_id, "return-label-refund-requested", { returnId, status }, runId);
      return { outcome: status };
    },

    async emailLabel(returnId: string, runId: string) {
      const row = await load(returnId);
      if (!row.label_tracking_number || !row.label_url)
        throw new Error(`Return ${returnId} has no label yet`);
      const order = await deps.db.order.findUniqueOrThrow({
        where: { id: row.order_id },
        include: { lines: { orderBy: { sku: "asc" } } },
      });
      const names = new Map(order.lines.map((line) => [line.sku, line.name]));
      const lines = row.lines.map((line) => ({
        name: names.get(line.sku) ?? line.sku,
        quantity: line.quantity,
      }));
      const refund = returnRefund(row.lines, deps.fee);
      const trackingUrl = row.label_tracking_url ?? deps.trackUrl(row.label_tracking_number);
      const content = {
        labelUrl: row.label_url,
        trackingNumber: row.label_tracking_number,
        trackingUrl,
        lines,
        refundAmount: refund.amount,
      };
      const sent = await deps.sender.send({
        idempotencyKey: returnLabelEmailKey(returnId),
        orderId: row.order_id,
        template: "returnLabel",
        to: order.email,
        content: emailTemplates.returnLabel({
          order: toOrderSummary(order, deps.orderUrl(order.id)),
          ...content,
        }),
      });
      await records.markLabelSent(returnId);
      // What the e-mail said, for the console's view of it (email-renderer.ts).
      await timeline.record(
        row.order_id,
        "return-label-sent",
        { returnId, ...content, email: sent.status },
        runId,
      );
      return { status: sent.status };
    },

    /** The returned lines less the restocking fee, refunded once (the refund row's id is the return's). */
    async refund(
      returnId: string,
      runId: string,
    ): Promise<{ amount: number; fee: number; refundId: string | null; withheld?: boolean }> {
      const row = await load(returnId);
      const refund = returnRefund(row.lines, deps.fee);
      if (refund.amount <= 0) {
        await records.recordRefund(returnId, 0, refund.fee);
        await timeline.record(
          row.order_id,
          "return-refunded",
          { returnId, amount: 0, fee: refund.fee },
          runId,
        );
        return { amount: 0, fee: refund.fee, refundId: null };
      }
      const ask = (amount: number) =>
        deps.refunds.refund({
          orderId: row.order_id,
          amount,
          refundId: returnId,
          reason: `return ${returnId}`,
          by: "process-return",
          handBackLabel: false,
        });
      const withhold = async (disputes: string[]) => {
        // The payment is charged back: the cardholder gets the money through the dispute, so the
        // return refunds nothing (refund-order told ops once per dispute). A retry finds the same.
        await records.recordRefund(returnId, 0, refund.fee);
        await timeline.record(
          row.order_id,
          "return-refund-withheld",
          { returnId, due: refund.amount, fee: refund.fee, disputes },
          runId,
        );
        return { amount: 0, fee: refund.fee, refundId: null, withheld: true };
      };
      let outcome;
      try {
        outcome = await ask(refund.amount);
      } catch (error) {
        if (isAppError(error) && error.code === "charge_disputed")
          return withhold((error.details as { disputes?: string[] } | undefined)?.disputes ?? []);
        // Refunded by hand already (in part or in full): what is left is refunded, ops are told;
        // a retry of this step could never refund more.
        if (!isAppError(error) || error.code !== "refund_exceeds_captured") throw error;
        const left = (error.details as { refundable?: number } | undefined)?.refundable ?? 0;
        await deps.alerts.notify({
          key: `return-refund-short-${returnId}`,
          title: "Return refund exceeds what is left to refund",
          fields: {
            orderId: row.order_id,
            returnId,
            due: refund.amount,
            refundable: left,
            action: "The order was refunded by other means; settle the rest with the customer",
          },
        });
        if (left <= 0) {
          await records.recordRefund(returnId, 0, refund.fee);
          await timeline.record(
            row.order_id,
            "return-refunded",
            { returnId, amount: 0, fee: refund.fee, due: refund.amount },
            runId,
          );
          return { amount: 0, fee: refund.fee, refundId: null };
        }
        try {
          outcome = await ask(left);
        } catch (again) {
          if (isAppError(again) && again.code === "charge_disputed")
            return withhold((again.details as { disputes?: string[] } | undefined)?.disputes ?? []);
          throw again;
        }
      }
      await records.recordRefund(returnId, outcome.amount, refund.fee);
      await timeline.record(
        row.order_id,
        "return-refunded",
        { returnId, amount: outcome.amount, fee: refund.fee, stripeRefund: outcome.providerId },
        runId,
      );
      return { amount: outcome.amount, fee: refund.fee, refundId: outcome.refundId };
    },

    async restock(returnId: string, runId: string) {
      const movements = await records.restock(returnId, runId);
      return { movements };
    },

    async writeOff(returnId: string, runId: string) {
      const row = await load(returnId);
      const written = await records.writeOff(returnId);
      if (written) {
        await timeline.record(row.order_id, "return-written-off", { returnId, lines: row.lines }, runId);
      }
      return { writtenOff: written };
    },

    async close(returnId: string, runId: string) {
      const row = await load(returnId);
      const closed = await records.transition(returnId, ["received"], "closed");
      if (closed)
        await timeline.record(row.order_id, "return-closed", { returnId, by: "process-return" }, runId);
      return { status: (closed ?? row).status };
    },

    /** Whether any line asks for another product instead of its money. */
    isExchange: (row: ReturnRow) => row.lines.some((line) => line.exchangeSku),

    async reserveExchange(returnId: string, runId: string) {
      return { movements: await records.reserveExchange(returnId, runId) };
    },

    /** The undo of the reservation: the new items back on the shelf unless they shipped. */
    async releaseExchange(returnId: string, runId: string) {
      return { movements: await records.releaseExchange(returnId, runId) };
    },

    /**
     * A dearer exchange's difference, charged once off-session on the card checkout saved (Stripe
     * key `exchange-charge-<returnId>`), before anything is reserved or shipped. Recorded on the
     * return (a retried step finds it there; one that crashed before recording asks Stripe again
     * with the same key and gets the same answer). A refusal (the bank wants the customer
     * present, or declines) is an outcome, not an error: recorded, told to ops and, once, to
     * the customer; the run stops there, and the return waits for ops.
     */
    async chargeExchange(returnId: string, runId: string) {
      const row = await load(returnId);
      if (row.exchange_charge_status === "failed")
        return { outcome: "failed" as const, amount: row.exchange_charge_amount ?? 0 };
      if (row.exchange_charge_status === "awaiting_payment" || row.exchange_charge_status === "unpaid")
        return { outcome: "awaiting-payment" as const, amount: row.exchange_charge_amount ?? 0 };
      if (row.exchange_charge_status)
        return {
          outcome: "charged" as const,
          amount: row.exchange_charge_amount ?? 0,
          paymentIntentId: row.exchange_charge_intent_id,
        };
      const amount = exchangeCharge(row.lines);
      if (amount <= 0) return { outcome: "none" as const, amount: 0 };
      // Ended by ops already (the run's cancel may not have reached this attempt): nothing to charge.
      if (endedStatuses.includes(row.status)) return { outcome: "ended" as const, amount: 0 };
      const card = await records.savedCard(returnId);
      let charged;
      try {
        if (!card?.stripe_customer_id || !card.payment_method_id)
          throw new PaymentRejectedError("declined", `order ${row.order_id} has no saved card`, {
            code: "no_saved_card",
          });
        charged = await deps.payments.chargeOffSession(
          {
            customerId: card.stripe_customer_id,
            paymentMethodId: card.payment_method_id,
            amount,
            currency: card.currency.trim().toLowerCase(),
            metadata: { orderId: row.order_id, returnId, purpose: "exchange-difference" },
          },
          exchangeChargeKey(returnId),
        );
      } catch (error) {
        if (!(error instanceof PaymentRejectedError)) throw error;
        if (error.reason === "authentication_required" && deps.checkouts) {
          // The bank wants the customer present: they pay on a Checkout page (the next steps).
          await records.recordExchangeCharge(returnId, {
            amount,
            status: "awaiting_payment",
            paymentIntentId: error.paymentIntentId,
            error: error.message,
          });
          await timeline.record(
            row.order_id,
            "exchange-charge-failed",
            { returnId, amount, reason: "authentication_required", message: error.message, checkout: true },
            runId,
          );
          return { outcome: "awaiting-payment" as const, amount };
        }
        await records.recordExchangeCharge(returnId, {
          amount,
          status: "failed",
          paymentIntentId: error.paymentIntentId,
          error: error.message,
        });
        await chargeFailed(row, amount, error, runId);
        return { outcome: "failed" as const, amount };
      }
      await records.recordExchangeCharge(returnId, {
        amount: charged.amount,
        status: "charged",
        paymentIntentId: charged.paymentIntentId,
      });
      await timeline.record(
        row.order_id,
        "exchange-charged",
        {
          returnId,
          amount: charged.amount,
          currency: charged.currency,
          paymentIntentId: charged.paymentIntentId,
        },
        runId,
      );
      // A reject or close that landed while Stripe was answering cancelled the run, and its
      // cleanup may have looked before this charge was recorded: the step gives it back itself
      // (the same refund key as the undo's, so the two together refund once).
      if (endedStatuses.includes((await load(returnId)).status)) {
        const refund = await refundCharge(returnId, runId);
        return { outcome: "refunded" as const, amount: charged.amount, refund };
      }
      return {
        outcome: "charged" as const,
        amount: charged.amount,
        paymentIntentId: charged.paymentIntentId,
      };
    },

    /**
     * The undo of the charge: the difference given back in full (key
     * `exchange-charge-refund-<returnId>`) when the exchange ends before its parcel was booked.
     * A shipped exchange keeps its charge: the customer has the item.
     */
    refundExchangeCharge: (returnId: string, runId: string) => refundCharge(returnId, runId),

    /** The new items to the customer, on a label of their own, once (reference `exchange-<returnId>`). */
    async shipExchange(returnId: string, runId: string) {
      const row = await load(returnId);
      if (row.exchange_tracking_number)
        return { trackingNumber: row.exchange_tracking_number, created: false };
      const destination = await records.destination(returnId);
      const address = parseStoredAddress(destination?.shipping_address);
      if (!address) throw new Error(`Order ${row.order_id} has no address to send the exchange to`);
      const lines = row.lines.flatMap((line) =>
        line.exchangeSku
          ? [
              {
                sku: line.exchangeSku,
                quantity: line.quantity,
                weightOz: destination?.weights?.[line.exchangeSku] ?? null,
              },
            ]
          : [],
      );
      const booking = await deps.labels.shipExchange({ returnId, address, lines });
      await records.recordExchangeShipment(returnId, booking);
      await timeline.record(
        row.order_id,
        "exchange-shipped",
        { returnId, trackingNumber: booking.trackingNumber, carrier: booking.carrier, lines },
        runId,
      );
      return { trackingNumber: booking.trackingNumber, created: true };
    },

    async emailExchange(returnId: string, runId: string) {
      const row = await load(returnId);
      if (!row.exchange_tracking_number)
        throw new Error(`Exchange of return ${returnId} has not shipped yet`);
      const { order, lines } = await exchangeLines(row);
      const content = {
        lines,
        trackingNumber: row.exchange_tracking_number,
        trackingUrl: row.exchange_tracking_url ?? deps.trackUrl(row.exchange_tracking_number),
      };
      const sent = await deps.sender.send({
        idempotencyKey: exchangeEmailKey(returnId),
        orderId: row.order_id,
        template: "exchangeShipped",
        to: order.email,
        content: emailTemplates.exchangeShipped({
          order: toOrderSummary(order, deps.orderUrl(order.id)),
          ...content,
        }),
      });
      await records.markExchangeSent(returnId);
      await timeline.record(
        row.order_id,
        "exchange-sent",
        { returnId, ...content, email: sent.status },
        runId,
      );
      return { status: sent.status };
    },

    /**
     * The exchange's parcel could not be booked, every retry spent, and its undos ran (the items
     * released, the difference refunded): the timeline says the exchange failed and ops are told,
     * once per return (the notice's key). The return stays open for ops to settle and close.
     */
    async failExchange(returnId: string, runId: string, reason: string) {
      const row = await load(returnId);
      const detail = {
        returnId,
        reason,
        released: row.exchange_released_at !== null,
        chargeStatus: row.exchange_charge_status,
      };
      await timeline.record(row.order_id, "exchange-failed", detail, runId);
      await deps.alerts.notify({
        key: `exchange-failed-${returnId}`,
        title: "Exchange not shipped: its parcel could not be booked",
        fields: {
          orderId: row.order_id,
          returnId,
          reason,
          chargeStatus: row.exchange_charge_status ?? "none",
          action:
            "The items went back to stock and any difference was refunded; settle with the customer, then close the return",
        },
      });
      return detail;
    },

    /**
     * The Checkout page for the difference, one per return (Stripe key
     * `exchange-checkout-<returnId>`), kept on the return. Payable until EXCHANGE_PAYMENT_WINDOW
     * ends, within Stripe's 24 hours.
     */
    async createExchangeCheckout(returnId: string) {
      const checkouts = deps.checkouts;
      if (!checkouts) throw new Error("exchange checkouts are not wired");
      const row = await load(returnId);
      if (row.exchange_checkout_session_id) {
        const view = await checkouts.sessions.retrieve(row.exchange_checkout_session_id);
        return { checkoutSessionId: view.id, url: view.url, expiresAt: null };
      }
      const card = await records.savedCard(returnId);
      const lifetime = Math.min(checkoutLifetime.maxMs, Math.max(checkoutLifetime.minMs, checkouts.windowMs));
      const expiresAt = new Date(Date.now() + lifetime);
      const orderUrl = deps.orderUrl(row.order_id);
      const view = await checkouts.sessions.create({
        returnId,
        orderId: row.order_id,
        stripeCustomerId: card?.stripe_customer_id ?? null,
        amount: row.exchange_charge_amount ?? exchangeCharge(row.lines),
        currency: (card?.currency ?? "usd").trim().toLowerCase(),
        description: "Exchange: the difference",
        successUrl: orderUrl,
        cancelUrl: orderUrl,
        expiresAt,
      });
      await records.recordExchangeCheckout(returnId, view.id);
      return { checkoutSessionId: view.id, url: view.url, expiresAt: expiresAt.toISOString() };
    },

    /** The Checkout page's URL to the customer, once (key `exchange-checkout-<returnId>`). */
    async emailExchangeCheckout(returnId: string, runId: string, payUrl: string, payBy: string | null) {
      const row = await load(returnId);
      const { order, lines } = await exchangeLines(row);
      const amount = row.exchange_charge_amount ?? exchangeCharge(row.lines);
      const content = { lines, amount, payUrl, payBy: payBy ?? "the date on the page" };
      const sent = await deps.sender.send({
        idempotencyKey: exchangeCheckoutEmailKey(returnId),
        orderId: row.order_id,
        template: "exchangePaymentNeeded",
        to: order.email,
        content: emailTemplates.exchangePaymentNeeded({
          order: toOrderSummary(order, deps.orderUrl(order.id)),
          ...content,
        }),
      });
      await timeline.record(
        row.order_id,
        "exchange-checkout-sent",
        { returnId, ...content, email: sent.status },
        runId,
      );
      return { status: sent.status };
    },

    /** Whether the difference is paid (the webhook recorded it), still awaited, or neither. */
    async exchangePaymentState(returnId: string) {
      const row = await load(returnId);
      return { charge: row.exchange_charge_status, status: row.status };
    },

    /** The webhook's (or the expiry's) paid Checkout Session, settled on its return. */
    settleExchangeCheckout: async (view: ExchangeCheckoutView, runId: string | null) => {
      const settled = await settleCheckout(view, runId);
      if (settled.outcome === "charged")
        return {
          outcome: settled.outcome,
          first: settled.first,
          returnId: settled.row.id,
          orderId: settled.row.order_id,
        };
      return { outcome: settled.outcome };
    },

    /** Stripe's current answer on a session, never a webhook's payload. */
    async readExchangeCheckout(checkoutSessionId: string) {
      const checkouts = deps.checkouts;
      if (!checkouts) throw new Error("exchange checkouts are not wired");
      return checkouts.sessions.retrieve(checkoutSessionId);
    },

    /**
     * EXCHANGE_PAYMENT_WINDOW is over: the session is expired at Stripe, and its answer decides.
     * Paid meanwhile (between the run's last read and the expiry), it is the exchange's charge
     * and the exchange ships (`paid`); expired unpaid, the charge is `unpaid` (`unpaid`).
     */
    async expireExchangeCheckout(returnId: string, runId: string) {
      const checkouts = deps.checkouts;
      if (!checkouts) throw new Error("exchange checkouts are not wired");
      const row = await load(returnId);
      if (row.exchange_charge_status === "charged") return { outcome: "paid" as const };
      if (!row.exchange_checkout_session_id) {
        await records.markExchangeUnpaid(returnId);
        return { outcome: "unpaid" as const };
      }
      const view = await checkouts.sessions.expire(row.exchange_checkout_session_id);
      if (view.paid) {
        const settled = await settleCheckout(view, runId);
        return { outcome: settled.outcome === "charged" ? ("paid" as const) : ("unpaid" as const) };
      }
      await records.markExchangeUnpaid(returnId);
      return { outcome: "unpaid" as const };
    },

    /**
     * The exchange closed unpaid, its items released already: the timeline says so, ops are told
     * (the customer sent the goods back for an exchange they did not pay), and a received return
     * is closed.
     */
    async closeUnpaidExchange(returnId: string, runId: string) {
      const row = await load(returnId);
      await timeline.record(
        row.order_id,
        "exchange-unpaid",
        { returnId, amount: row.exchange_charge_amount, released: row.exchange_released_at !== null },
        runId,
      );
      await deps.alerts.notify({
        key: `exchange-unpaid-${returnId}`,
        title: "Exchange closed: the difference was not paid in time",
        fields: {
          orderId: row.order_id,
          returnId,
          amount: row.exchange_charge_amount ?? 0,
          action: "The new items went back to stock; settle the returned goods with the customer",
        },
      });
      const closed = await records.transition(returnId, ["received"], "closed", {
        note: "exchange not paid in time",
      });
      if (closed)
        await timeline.record(row.order_id, "return-closed", { returnId, by: "process-return" }, runId);
      return { status: (closed ?? row).status };
    },

    /** The label waited RETURN_SHIP_WITHIN and no parcel came: the return is cancelled. */
    async expire(returnId: string, runId: string) {
      const row = await load(returnId);
      const cancelled = await records.transition(returnId, ["requested", "approved"], "cancelled", {
        note: "no parcel within the return period",
      });
      if (cancelled) {
        await timeline.record(row.order_id, "return-cancelled", { returnId, reason: "expired" }, runId);
      }
      return { status: (cancelled ?? row).status };
    },
  };
}

export type ReturnWork = ReturnType<typeof createReturnWork>;
