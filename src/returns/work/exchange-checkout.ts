import { emailTemplates, toOrderSummary } from "../../notifications/templates";
import type { ExchangeCheckoutView } from "../../payments/exchange-checkout";
import { exchangeCharge } from "../return-policy";
import { exchangeLines, type WorkContext } from "./context";
import * as keys from "./keys";
import { isDisputed, refundRefusedAsDisputed } from "./exchange-charge";

/** Stripe keeps a Checkout Session payable 30 minutes to 24 hours after its creation. */
const checkoutLifetime = { minMs: 31 * 60_000, maxMs: 23 * 3600_000 };

/**
 * A paid Checkout Session for a return's difference, from the webhook or the run's expiry:
 * while the charge awaits it, it becomes the exchange's charge, once; paid on a return whose
 * exchange was closed unpaid or ended meanwhile, it is refunded in full, once (key
 * `exchange-checkout-refund-<returnId>`).
 */
export async function settleCheckout(ctx: WorkContext, view: ExchangeCheckoutView, runId: string | null) {
  const { deps, records, timeline, load } = ctx;
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
    refund = await deps.payments.refundInFull(view.paymentIntentId, keys.exchangeCheckoutRefundKey(row.id));
  } catch (error) {
    if (!isDisputed(error)) throw error;
    await refundRefusedAsDisputed(ctx, now, view.paymentIntentId, runId);
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
}

/** The difference paid on a Checkout page: created, e-mailed, settled, expired, closed unpaid. */
export function createExchangeCheckoutWork(ctx: WorkContext) {
  const { deps, records, timeline, load } = ctx;
  return {
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
      const { order, lines } = await exchangeLines(ctx, row);
      const amount = row.exchange_charge_amount ?? exchangeCharge(row.lines);
      const content = { lines, amount, payUrl, payBy: payBy ?? "the date on the page" };
      const sent = await deps.sender.send({
        idempotencyKey: keys.exchangeCheckoutEmailKey(returnId),
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
      const settled = await settleCheckout(ctx, view, runId);
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
        const settled = await settleCheckout(ctx, view, runId);
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
  };
}
