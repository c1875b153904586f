import type Stripe from "stripe";
import fixtures from "./fixtures.json";

/**
 * Stripe's own example objects (see `_provenance` in fixtures.json). Every object the sandbox
 * returns starts as a deep copy of one of these, so fields we never set still have Stripe's shape.
 */
interface FixtureTypes {
  "checkout.session": Stripe.Checkout.Session;
  payment_intent: Stripe.PaymentIntent;
  charge: Stripe.Charge;
  refund: Stripe.Refund;
  event: Stripe.Event;
  item: Stripe.LineItem;
  balance_transaction: Stripe.BalanceTransaction;
  dispute: Stripe.Dispute;
  review: Stripe.Review;
  coupon: Stripe.Coupon;
  promotion_code: Stripe.PromotionCode;
  shipping_rate: Stripe.ShippingRate;
  tax_rate: Stripe.TaxRate;
  discount: Stripe.Discount;
}

export function fromFixture<K extends keyof FixtureTypes>(name: K): FixtureTypes[K] {
  return structuredClone(fixtures.resources[name]) as unknown as FixtureTypes[K];
}
