import { freshLink } from "./fresh-link";
import { addressCorrection } from "./address-correction";
import { deliveryException } from "./delivery-exception";
import { orderCancelled } from "./order-cancelled";
import { outOfStock } from "./out-of-stock";
import { paymentFailed } from "./payment-failed";
import { refunded } from "./refunded";
import { reviewRequest } from "./review-request";
import { shipped } from "./shipped";
import { shortLines } from "./short-lines";
import { returnLabel } from "./return-label";
import { exchangeShipped } from "./exchange-shipped";
import { exchangeChargeFailed } from "./exchange-charge-failed";
import { exchangePaymentNeeded } from "./exchange-payment-needed";

export { freshLink, type FreshLinkInput } from "./fresh-link";
export { orderCancelled, type CancellationSettlement, type OrderCancelledInput } from "./order-cancelled";
export { outOfStock, type OutOfStockInput } from "./out-of-stock";
export { paymentFailed, type PaymentFailedInput } from "./payment-failed";
export { refunded, type RefundedInput } from "./refunded";
export { reviewRequest, type ReviewRequestInput } from "./review-request";
export { shipped, type ShippedInput } from "./shipped";
export { shortLines, type ShortLinesInput } from "./short-lines";
export { returnLabel, type ReturnLabelInput } from "./return-label";
export { exchangeShipped, type ExchangeShippedInput } from "./exchange-shipped";
export { exchangeChargeFailed, type ExchangeChargeFailedInput } from "./exchange-charge-failed";
export { exchangePaymentNeeded, type ExchangePaymentNeededInput } from "./exchange-payment-needed";
export { addressCorrection, type AddressCorrectionInput } from "./address-correction";
export {
  deliveryException,
  type DeliveryExceptionInput,
  type DeliveryExceptionKind,
} from "./delivery-exception";
export { formatMoney } from "./money";
export { escapeHtml } from "./html";
export { lineMoneyText, moneyRows, orderReference } from "./layout";
export {
  lineMoneyOf,
  moneySummaryOf,
  toOrderSummary,
  type EmailContent,
  type OrderLineSummary,
  type OrderSummary,
} from "./types";

/** Every customer e-mail, by the name recorded in email_messages.template. */
export const emailTemplates = {
  shipped,
  reviewRequest,
  paymentFailed,
  outOfStock,
  orderCancelled,
  refunded,
  freshLink,
  addressCorrection,
  deliveryException,
  shortLines,
  returnLabel,
  exchangeShipped,
  exchangeChargeFailed,
  exchangePaymentNeeded,
} as const;

export type EmailTemplateName = keyof typeof emailTemplates;
export type EmailTemplateInput<Name extends EmailTemplateName> = Parameters<(typeof emailTemplates)[Name]>[0];
