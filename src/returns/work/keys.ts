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
