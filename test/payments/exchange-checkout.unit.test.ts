import Stripe from "stripe";
import { createExchangeCheckouts, type ExchangeCheckoutRequest } from "../../src/payments/exchange-checkout";
import { CheckoutStripe } from "../support/fakes/checkout-stripe";

/**
 * The exchange's Checkout Session for the difference (src/payments/exchange-checkout.ts) over an
 * in-memory Stripe: what is asked of Stripe, and what its answer becomes. The fast tier of the
 * `exchanges-fast` mutation group; test/payments/exchange-checkout.test.ts stays the check against
 * the Stripe stand-in through stripe-node.
 */

const request = (fields: Partial<ExchangeCheckoutRequest> = {}): ExchangeCheckoutRequest => ({
  returnId: "ret_1",
  orderId: "ord_1",
  stripeCustomerId: "cus_1",
  amount: 700,
  currency: "USD",
  description: "Exchange: the difference",
  successUrl: "https://shop/orders/ord_1?paid=1",
  cancelUrl: "https://shop/orders/ord_1",
  expiresAt: new Date(Date.UTC(2026, 0, 1, 12, 0, 0, 999)),
  ...fields,
});

function setup() {
  const stripe = new CheckoutStripe();
  return { stripe, checkouts: createExchangeCheckouts(stripe.asStripe()) };
}

describe("the exchange's Checkout Session (createExchangeCheckouts)", () => {
  it("asks Stripe for one payment page for the difference, on the customer's account, captured at once", async () => {
    const { stripe, checkouts } = setup();
    const view = await checkouts.create(request());
    const metadata = { orderId: "ord_1", returnId: "ret_1", purpose: "exchange-difference" };
    expect(stripe.created).toEqual([
      {
        params: {
          mode: "payment",
          line_items: [
            {
              price_data: {
                currency: "usd",
                unit_amount: 700,
                product_data: { name: "Exchange: the difference" },
              },
              quantity: 1,
            },
          ],
          customer: "cus_1",
          metadata,
          payment_intent_data: { capture_method: "automatic", metadata },
          success_url: "https://shop/orders/ord_1?paid=1",
          cancel_url: "https://shop/orders/ord_1",
          expires_at: Date.UTC(2026, 0, 1, 12, 0, 0) / 1000,
        },
        idempotencyKey: "exchange-checkout-ret_1",
      },
    ]);
    expect(view).toEqual({
      id: "cs_test_1",
      url: "https://checkout.stripe.test/pay/cs_test_1",
      status: "open",
      paid: false,
      paymentIntentId: null,
      amount: 700,
      currency: "usd",
      returnId: "ret_1",
    });
  });

  it("a retry is the same session; no saved customer, no customer on the page", async () => {
    const { stripe, checkouts } = setup();
    const first = await checkouts.create(request({ stripeCustomerId: null }));
    const again = await checkouts.create(request({ stripeCustomerId: null }));
    expect(again.id).toBe(first.id);
    expect(stripe.sessions.size).toBe(1);
    expect(stripe.created[0]?.params).not.toHaveProperty("customer");
  });

  it("reads Stripe's answer: paid, its PaymentIntent whether an id or expanded", async () => {
    const { stripe, checkouts } = setup();
    const { id } = await checkouts.create(request());
    stripe.pay(id);
    expect(await checkouts.retrieve(id)).toMatchObject({
      id,
      status: "complete",
      paid: true,
      paymentIntentId: `pi_${id}`,
    });
    stripe.expandIntent = true;
    expect(await checkouts.retrieve(id)).toMatchObject({ paid: true, paymentIntentId: `pi_${id}` });
  });

  it("a complete session not paid (an async method pending) is not paid", async () => {
    const { stripe, checkouts } = setup();
    const { id } = await checkouts.create(request());
    stripe.pay(id, "unpaid");
    expect(await checkouts.retrieve(id)).toMatchObject({ status: "complete", paid: false });
  });

  it("a session that is not ours names no return; a status Stripe adds later is not payable through us", async () => {
    const { stripe, checkouts } = setup();
    const session = (fields: Record<string, unknown>) => {
      const id = `cs_raw_${stripe.sessions.size}`;
      stripe.sessions.set(id, {
        id,
        object: "checkout.session",
        ...fields,
      } as unknown as Stripe.Checkout.Session);
      return id;
    };
    const bare = session({ status: "open", metadata: null });
    expect(await checkouts.retrieve(bare)).toEqual({
      id: bare,
      url: null,
      status: "open",
      paid: false,
      paymentIntentId: null,
      amount: 0,
      currency: "",
      returnId: null,
    });
    const order = session({ status: "complete", metadata: { returnId: "ret_1", purpose: "order" } });
    expect(await checkouts.retrieve(order)).toMatchObject({ status: "complete", returnId: null });
    const nameless = session({ status: "expired", metadata: { purpose: "exchange-difference" } });
    expect(await checkouts.retrieve(nameless)).toMatchObject({ status: "expired", returnId: null });
    const later = session({ status: "processing", metadata: {} });
    expect(await checkouts.retrieve(later)).toMatchObject({ status: "open" });
  });

  it("expires an open session: no longer payable", async () => {
    const { stripe, checkouts } = setup();
    const { id } = await checkouts.create(request());
    expect(await checkouts.expire(id)).toMatchObject({ id, status: "expired", paid: false, url: null });
    expect(stripe.expired).toEqual([id]);
    expect(() => stripe.pay(id)).toThrow(/is expired, not open/);
  });

  it("a session paid already is not expired: the answer says paid", async () => {
    const { stripe, checkouts } = setup();
    const { id } = await checkouts.create(request());
    stripe.pay(id);
    expect(await checkouts.expire(id)).toMatchObject({ status: "complete", paid: true });
    expect(stripe.expired).toEqual([]);
  });

  it("paid between the look and the expiry: Stripe refuses the expiry, and its answer now says paid", async () => {
    const { stripe, checkouts } = setup();
    const { id } = await checkouts.create(request());
    stripe.beforeExpire = (sessionId) => void stripe.pay(sessionId);
    expect(await checkouts.expire(id)).toMatchObject({
      status: "complete",
      paid: true,
      paymentIntentId: `pi_${id}`,
    });
    expect(stripe.expired).toEqual([id]);
  });

  it("Stripe unreachable while expiring: the step fails for a retry", async () => {
    const { stripe, checkouts } = setup();
    const { id } = await checkouts.create(request());
    stripe.beforeExpire = () => {
      throw new Stripe.errors.StripeConnectionError({ message: "socket hang up" });
    };
    await expect(checkouts.expire(id)).rejects.toThrow("socket hang up");
  });
});
