import { customerRules } from "../../shared/order-model";
import type { OrderStatus } from "../../generated/prisma/enums";

export type { CustomerOrder } from "../../orders/customer-order";
export { isReviewable } from "../../orders/review-order";

export const customerStatus: Record<
  OrderStatus,
  { label: string; tone: "" | "ok" | "bad" | "warn"; text: string }
> = {
  pending: { label: "Waiting for payment", tone: "", text: "We have not heard from your bank yet." },
  payment_processing: {
    label: "Payment processing",
    tone: "",
    text: "Your payment is being processed; this page updates when it is done.",
  },
  authorized: { label: "Payment authorised", tone: "", text: "We are preparing your order." },
  paid: { label: "Paid", tone: "", text: "We are preparing your order." },
  fulfilling: { label: "Preparing", tone: "", text: "We are packing your order." },
  shipped: { label: "Shipped", tone: "ok", text: "Your parcel is on its way." },
  delivered: { label: "Delivered", tone: "ok", text: "Your parcel has been delivered." },
  completed: { label: "Completed", tone: "ok", text: "Your order is complete. Thank you!" },
  payment_failed: {
    label: "Payment failed",
    tone: "bad",
    text: "We could not take the payment, so the order was not shipped. You have not been charged.",
  },
  expired: { label: "Checkout expired", tone: "warn", text: "The checkout expired before it was paid." },
  cancelled: { label: "Cancelled", tone: "warn", text: "This order has been cancelled." },
  cancelled_out_of_stock: {
    label: "Cancelled: out of stock",
    tone: "warn",
    text: "Something in your order sold out, so we cancelled it; any money taken is returned.",
  },
};

/** States after which the page stops polling: nothing more will happen to the order by itself. */
export function isSettled(status: OrderStatus): boolean {
  return (customerRules["stop polling the status"].statuses as readonly string[]).includes(status);
}
