import type { FakeRecords } from "./return-steps";

const ended = ["rejected", "closed", "cancelled"];

/**
 * The Checkout payment's writes (src/returns/records/exchange.ts) added to the return steps'
 * in-memory records: each lands once, on the condition its SQL's WHERE puts, and says whether it
 * wrote. Kept apart from return-steps.ts, which the returns' suites grow.
 */
export function withCheckoutRecords(records: FakeRecords) {
  const { row, writes } = records;
  return Object.assign(records, {
    async recordExchangeCheckout(returnId: string, checkoutSessionId: string) {
      if (row.exchange_checkout_session_id !== null) return false;
      writes.push(`exchange-checkout ${checkoutSessionId}`);
      row.exchange_checkout_session_id = checkoutSessionId;
      return true;
    },
    async recordExchangeCheckoutPaid(returnId: string, paid: { paymentIntentId: string; amount: number }) {
      if (row.exchange_charge_status !== "awaiting_payment" || ended.includes(row.status)) return false;
      writes.push(`exchange-checkout-paid ${paid.paymentIntentId} ${paid.amount}`);
      Object.assign(row, {
        exchange_charge_status: "charged",
        exchange_charge_intent_id: paid.paymentIntentId,
        exchange_charge_amount: paid.amount,
        exchange_charge_error: null,
        exchange_charged_at: new Date(),
      });
      return true;
    },
    async markExchangeUnpaid() {
      if (row.exchange_charge_status !== "awaiting_payment") return false;
      writes.push("exchange-unpaid");
      row.exchange_charge_status = "unpaid";
      return true;
    },
    async recordLateExchangePaymentRefund(
      returnId: string,
      refund: { paymentIntentId: string; amount: number; refundId: string },
    ) {
      if (row.exchange_charge_status !== "awaiting_payment" && row.exchange_charge_status !== "unpaid")
        return false;
      writes.push(`exchange-late-refund ${refund.refundId} ${refund.amount}`);
      Object.assign(row, {
        exchange_charge_status: "refunded",
        exchange_charge_intent_id: refund.paymentIntentId,
        exchange_charge_amount: refund.amount,
        exchange_charge_refund_id: refund.refundId,
      });
      return true;
    },
  });
}
