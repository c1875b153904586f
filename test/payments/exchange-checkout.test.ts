import type Stripe from "stripe";
import type { StripeSandbox } from "../../src/dev/stripe-sandbox";
import { claimedPayment } from "../../src/orders/intake/stripe-event-plan";
import {
  createExchangeCheckouts,
  exchangeCheckoutKey,
  type ExchangeCheckoutRequest,
  type ExchangeCheckouts,
} from "../../src/payments/exchange-checkout";
import { startSandbox } from "../dev/stripe-sandbox/harness";
import { defined } from "../support/defined";

/**
 * The Checkout Session a dearer exchange's difference is paid on when the bank wants the customer
 * present, against the Stripe stand-in through stripe-node: one session per return whatever
 * retries, a completion that names the return and no order, and an expiry that tells a session
 * paid meanwhile from one that was not.
 */
describe("the exchange's Checkout Session for the difference", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;
  let checkouts: ExchangeCheckouts;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
    checkouts = createExchangeCheckouts(stripe);
  });
  afterAll(() => sandbox.close());

  let n = 0;
  const request = (): ExchangeCheckoutRequest => {
    n += 1;
    const hex = n.toString(16).padStart(12, "0");
    return {
      returnId: `00000000-0000-4000-8000-${hex}`,
      orderId: `00000000-0000-4000-9000-${hex}`,
      stripeCustomerId: null,
      amount: 500,
      currency: "USD",
      description: "Exchange: the difference",
      successUrl: "https://shop.example/orders/x?paid=1",
      cancelUrl: "https://shop.example/orders/x",
      expiresAt: new Date(sandbox.clock().now + 23 * 3600_000),
    };
  };

  const creates = (returnId: string) =>
    sandbox.requests.filter(
      (r) => r.endpoint === "checkout.sessions.create" && r.idempotencyKey === exchangeCheckoutKey(returnId),
    );

  it("one session per return, a retry answered with the same one", async () => {
    const ask = request();
    const first = await checkouts.create(ask);
    const again = await checkouts.create(ask);
    expect(again.id).toBe(first.id);
    expect(first).toMatchObject({
      status: "open",
      paid: false,
      amount: 500,
      currency: "usd",
      returnId: ask.returnId,
    });
    expect(first.url).toMatch(/^http/);
    expect(creates(ask.returnId).map((r) => r.replayed)).toEqual([false, true]);
    const session = await stripe.checkout.sessions.retrieve(first.id);
    expect(session).toMatchObject({
      mode: "payment",
      client_reference_id: null,
      metadata: { orderId: ask.orderId, returnId: ask.returnId, purpose: "exchange-difference" },
    });
  });

  it("paid: the completion names the return, not an order, and Stripe's record says paid", async () => {
    const ask = request();
    const created = await checkouts.create(ask);
    const done = await sandbox.completeCheckoutSession(created.id, "paid", { deliver: false });
    const completed = defined(done.events.find((e) => e.type === "checkout.session.completed"));
    // The order intake does not take it for an order's checkout.
    expect(claimedPayment(completed)).toBeNull();
    const payload = completed.data.object as Stripe.Checkout.Session;
    expect(payload.metadata).toMatchObject({ returnId: ask.returnId, purpose: "exchange-difference" });
    const view = await checkouts.retrieve(created.id);
    expect(view).toMatchObject({ status: "complete", paid: true, returnId: ask.returnId, amount: 500 });
    const intent = await stripe.paymentIntents.retrieve(defined(view.paymentIntentId ?? undefined));
    expect(intent).toMatchObject({ status: "succeeded", amount_received: 500 });
    expect(intent.metadata).toMatchObject({ returnId: ask.returnId });
    // Too late to expire: the answer says it was paid.
    expect(await checkouts.expire(created.id)).toMatchObject({ status: "complete", paid: true });
  });

  it("never paid: expired, and no longer payable", async () => {
    const ask = request();
    const created = await checkouts.create(ask);
    expect(await checkouts.expire(created.id)).toMatchObject({ status: "expired", paid: false });
    expect(await checkouts.expire(created.id)).toMatchObject({ status: "expired", paid: false });
    await expect(async () =>
      sandbox.completeCheckoutSession(created.id, "paid", { deliver: false }),
    ).rejects.toThrow(/is expired, not open/);
  });
});
