import Stripe from "stripe";
import type { StripeSandbox } from "../../../src/dev/stripe-sandbox";
import { sessionParams, startSandbox } from "./harness";

/**
 * Saving the card at Checkout and charging it later, off-session, as Stripe does: a session with
 * `customer_creation: always` and `payment_intent_data[setup_future_usage]=off_session` leaves the
 * PaymentIntent naming a Customer with the card attached; POST /v1/payment_intents with that
 * customer and card, `off_session` and `confirm`, charges it at once, once per idempotency key.
 */
describe("Stripe sandbox: off-session PaymentIntents", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
  });
  afterAll(() => sandbox.close());
  afterEach(() => sandbox.clearFailures());

  async function paidWithSavedCard() {
    const session = await stripe.checkout.sessions.create(
      sessionParams({
        customer_creation: "always",
        payment_intent_data: {
          capture_method: "manual",
          setup_future_usage: "off_session",
          metadata: { orderId: "8d7f6f57-6a53-4a3e-9a65-0f0e0e3f7f10" },
        },
      }),
    );
    await sandbox.completeCheckoutSession(session.id, "authorized", { deliver: false });
    const completed = await stripe.checkout.sessions.retrieve(session.id, { expand: ["payment_intent"] });
    const intent = completed.payment_intent as Stripe.PaymentIntent;
    return { session: completed, intent };
  }

  it("Checkout saves the card to a Customer it creates", async () => {
    const { session, intent } = await paidWithSavedCard();
    expect(session.customer).toMatch(/^cus_/);
    expect(intent.customer).toBe(session.customer);
    expect(intent.setup_future_usage).toBe("off_session");
    expect(intent.payment_method).toMatch(/^pm_/);
    // Without customer_creation, nothing is saved: as before.
    const plain = await stripe.checkout.sessions.create(sessionParams());
    await sandbox.completeCheckoutSession(plain.id, "authorized", { deliver: false });
    const plainIntent = (await stripe.checkout.sessions.retrieve(plain.id, { expand: ["payment_intent"] }))
      .payment_intent as Stripe.PaymentIntent;
    expect(plainIntent.customer).toBeNull();
    expect(plainIntent.setup_future_usage).toBeNull();
  });

  it("refuses customer_creation with a customer, and values Stripe does not know", async () => {
    await expect(
      stripe.checkout.sessions.create(sessionParams({ customer_creation: "always", customer: "cus_x" })),
    ).rejects.toMatchObject({ type: "StripeInvalidRequestError", param: "customer_creation" });
    await expect(
      stripe.checkout.sessions.create(
        sessionParams({
          payment_intent_data: { setup_future_usage: "later" as "off_session" },
        }),
      ),
    ).rejects.toMatchObject({ param: "payment_intent_data[setup_future_usage]" });
  });

  it("charges the saved card off-session once per key: a repeat replays the same PaymentIntent", async () => {
    const { intent } = await paidWithSavedCard();
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 1000,
      currency: "eur",
      customer: intent.customer as string,
      payment_method: intent.payment_method as string,
      off_session: true,
      confirm: true,
      metadata: { returnId: "r-1" },
    };
    const first = await stripe.paymentIntents.create(params, { idempotencyKey: "exchange-charge-r-1" });
    expect(first).toMatchObject({
      object: "payment_intent",
      status: "succeeded",
      amount: 1000,
      amount_received: 1000,
      customer: intent.customer,
      payment_method: intent.payment_method,
      metadata: { returnId: "r-1" },
    });
    expect(first.lastResponse.headers["idempotent-replayed"]).toBeUndefined();
    const again = await stripe.paymentIntents.create(params, { idempotencyKey: "exchange-charge-r-1" });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    // One charge on the balance, not two.
    const ledger = await stripe.balanceTransactions.list({ limit: 100, expand: ["data.source"] });
    const charges = ledger.data.filter(
      (t) => t.type === "charge" && (t.source as Stripe.Charge).payment_intent === first.id,
    );
    expect(charges.map((t) => t.amount)).toEqual([1000]);
    // The same key with another amount is Stripe's idempotency error.
    await expect(
      stripe.paymentIntents.create({ ...params, amount: 2000 }, { idempotencyKey: "exchange-charge-r-1" }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
  });

  it("an off-session charge the bank wants authenticated fails as Stripe's: 402, the PaymentIntent attached", async () => {
    const { intent } = await paidWithSavedCard();
    sandbox.injectFailure("payment_intents.create", { kind: "decline", code: "authentication_required" });
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 700,
      currency: "eur",
      customer: intent.customer as string,
      payment_method: intent.payment_method as string,
      off_session: true,
      confirm: true,
    };
    let error: unknown;
    try {
      await stripe.paymentIntents.create(params, { idempotencyKey: "exchange-charge-r-2" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
    const cardError = error as Stripe.errors.StripeCardError;
    expect(cardError.code).toBe("authentication_required");
    expect(cardError.decline_code).toBe("authentication_required");
    const failed = cardError.payment_intent;
    expect(failed?.status).toBe("requires_payment_method");
    expect(failed?.last_payment_error?.code).toBe("authentication_required");
    // Saved under the key: the retry is told the same, and no money moved.
    await expect(
      stripe.paymentIntents.create(params, { idempotencyKey: "exchange-charge-r-2" }),
    ).rejects.toMatchObject({ code: "authentication_required", payment_intent: { id: failed?.id } });
    const ledger = await stripe.balanceTransactions.list({ limit: 100, expand: ["data.source"] });
    expect(
      ledger.data.filter((t) => (t.source as Stripe.Charge | null)?.payment_intent === failed?.id),
    ).toHaveLength(0);
    const events = await stripe.events.list({ type: "payment_intent.payment_failed", limit: 100 });
    expect(events.data.filter((e) => (e.data.object as Stripe.PaymentIntent).id === failed?.id)).toHaveLength(
      1,
    );
  });

  it("refuses a card that is not the customer's, an unknown customer and on-session creates", async () => {
    const { intent } = await paidWithSavedCard();
    const base: Stripe.PaymentIntentCreateParams = {
      amount: 500,
      currency: "eur",
      customer: intent.customer as string,
      payment_method: "pm_not_attached",
      off_session: true,
      confirm: true,
    };
    await expect(stripe.paymentIntents.create(base)).rejects.toMatchObject({
      type: "StripeInvalidRequestError",
      param: "payment_method",
    });
    await expect(
      stripe.paymentIntents.create({
        ...base,
        customer: "cus_unknown",
        payment_method: intent.payment_method as string,
      }),
    ).rejects.toMatchObject({ code: "resource_missing", param: "customer" });
    await expect(
      stripe.paymentIntents.create({ amount: 500, currency: "eur", off_session: true, confirm: true }),
    ).rejects.toMatchObject({ code: "parameter_missing", param: "payment_method" });
    await expect(
      stripe.paymentIntents.create({
        ...base,
        payment_method: intent.payment_method as string,
        confirm: false,
      }),
    ).rejects.toMatchObject({ code: "parameter_not_implemented" });
    await expect(
      stripe.paymentIntents.create({ ...base, amount_to_capture: 1 } as Stripe.PaymentIntentCreateParams),
    ).rejects.toMatchObject({ code: "parameter_unknown" });
  });
});
