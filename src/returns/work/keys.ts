import { createHash } from "node:crypto";

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
/**
 * The refund row (and Stripe key `refund-<id>`) of what was left to refund after Stripe refused a
 * return's refund as too large (a Dashboard refund in part): the return's own key is spent on the
 * refusal, since Stripe answers a key with its first answer. A name-based UUID (RFC 4122 v5 layout)
 * of the return's id, so every retry asks under the same one.
 */
export function restRefundIdOf(returnId: string): string {
  const hex = createHash("sha1").update(`return-refund-rest:${returnId}`).digest("hex");
  const variant = ((parseInt(hex.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
