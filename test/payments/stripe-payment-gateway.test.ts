import Stripe from "stripe";
import type { StripeSandbox } from "../../src/dev/stripe-sandbox";
import { planFor } from "../../src/orders/intake/stripe-event-plan";
import {
  isLapsedAuthorization,
  PaymentRejectedError,
  type PaymentGateway,
} from "../../src/payments/payment-gateway";
import { createStripePaymentGateway } from "../../src/payments/stripe-payment-gateway";
import { sessionParams, startSandbox } from "../dev/stripe-sandbox/harness";
import { fixtureEvent, fixturePaymentIntent } from "../orders/intake-harness";
import { defined } from "../support/defined";

const day = 24 * 3600_000;

/**
 * What the payment gateway makes of each capture failure Stripe produces, against the sandbox through
 * stripe-node. A rejection is final (the workflow does not retry it) and carries the reason the compensation
 * reads and the words ops see.
 */
describe("the Stripe payment gateway classifies capture failures", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;
  let gateway: PaymentGateway;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
    gateway = createStripePaymentGateway(stripe);
  });
  afterAll(() => sandbox.close());
  afterEach(() => sandbox.clearFailures());

  async function authorized(): Promise<string> {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized", {
      deliver: false,
    });
    return defined(paymentIntent).id;
  }

  async function rejection(paymentIntentId: string): Promise<PaymentRejectedError> {
    const error = await gateway
      .capture(paymentIntentId, `capture-${paymentIntentId}`)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PaymentRejectedError);
    return error as PaymentRejectedError;
  }

  const retrievesOf = (paymentIntentId: string) =>
    sandbox.requests.filter(
      (request) => request.endpoint === "payment_intents.retrieve" && request.path.includes(paymentIntentId),
    );

  const capturesOf = (paymentIntentId: string) =>
    sandbox.requests.filter(
      (request) => request.endpoint === "payment_intents.capture" && request.path.includes(paymentIntentId),
    );

  it.each([["charge_expired_for_capture"], ["capture_charge_authorization_expired"]] as const)(
    "%s (400) is an expired authorization, labelled so",
    async (code) => {
      const id = await authorized();
      sandbox.injectFailure("payment_intents.capture", { kind: "capture_failure", code });
      const error = await rejection(id);
      expect(error).toMatchObject({ reason: "authorization_expired", label: "authorization expired" });
      expect(error.message).toMatch(new RegExp(`^authorization expired \\(${code}\\): `));
      expect(error.cause).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    },
  );

  it("an authorization that lapsed on the clock but that Stripe has not expired yet", async () => {
    const id = await authorized();
    await sandbox.advanceClock(7 * day + 60_000, { expire: false });
    const error = await rejection(id);
    expect(error).toMatchObject({ reason: "authorization_expired" });
    expect(error.message).toContain("capture_charge_authorization_expired");
    expect(capturesOf(id)).toHaveLength(1);
  });

  it("a PaymentIntent Stripe canceled as expired is answered by the capture itself: expired", async () => {
    const id = await authorized();
    await sandbox.advanceClock(8 * day);
    expect(sandbox.paymentIntent(id)?.cancellation_reason).toBe("expired");
    const error = await rejection(id);
    expect(error).toMatchObject({ reason: "authorization_expired", label: "authorization expired" });
    expect(error.message).toContain("charge_expired_for_capture");
    // One call: no look at the PaymentIntent before the capture.
    expect(capturesOf(id)).toHaveLength(1);
    expect(retrievesOf(id)).toHaveLength(0);
  });

  it("the older API's cancellation_reason automatic means the same", async () => {
    const id = await authorized();
    // Stripe before 2024-06 reported a lapse as `automatic`.
    Object.assign(defined(sandbox.paymentIntent(id)), {
      status: "canceled",
      cancellation_reason: "automatic",
    });
    expect(await rejection(id)).toMatchObject({ reason: "authorization_expired" });
  });

  it("a PaymentIntent voided by someone else is not capturable, and not called expired", async () => {
    const id = await authorized();
    await stripe.paymentIntents.cancel(id, { cancellation_reason: "requested_by_customer" });
    expect(await rejection(id)).toMatchObject({
      reason: "unexpected_state",
      label: "payment not capturable",
    });
  });

  it("capture_unauthorized_payment (400) is not capturable", async () => {
    const id = await authorized();
    sandbox.injectFailure("payment_intents.capture", {
      kind: "capture_failure",
      code: "capture_unauthorized_payment",
    });
    expect(await rejection(id)).toMatchObject({ reason: "unexpected_state" });
  });

  it("a 402 card error (the issuer declines the capture) is declined", async () => {
    const id = await authorized();
    sandbox.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });
    const error = await rejection(id);
    expect(error).toMatchObject({ reason: "declined", label: "card declined" });
    expect(error.message).toMatch(/^card declined \(generic_decline\): Your card was declined\.$/);
    expect(error.cause).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(capturesOf(id).map((request) => request.status)).toEqual([402]);
  });

  it("a 500 or 429 is not a rejection: it propagates for the step to retry", async () => {
    const id = await authorized();
    sandbox.injectFailure("payment_intents.capture", { kind: "server_error" });
    const error = await gateway.capture(id, `capture-${id}`).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(PaymentRejectedError);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAPIError);
    await expect(gateway.capture(id, `capture-${id}`)).resolves.toMatchObject({ alreadyCaptured: false });
  });

  it("requires_capture: captured in one call, not already captured", async () => {
    const id = await authorized();
    await expect(gateway.capture(id, `capture-${id}`)).resolves.toEqual({
      paymentIntentId: id,
      amountCaptured: 3490,
      currency: "eur",
      alreadyCaptured: false,
    });
    expect(capturesOf(id)).toHaveLength(1);
    expect(retrievesOf(id)).toHaveLength(0);
  });

  it("our capture retried (same key) is Stripe's replay: already captured, the same amount", async () => {
    const id = await authorized();
    await gateway.capture(id, `capture-${id}`);
    await expect(gateway.capture(id, `capture-${id}`)).resolves.toEqual({
      paymentIntentId: id,
      amountCaptured: 3490,
      currency: "eur",
      alreadyCaptured: true,
    });
    expect(sandbox.paymentIntent(id)?.amount_received).toBe(3490);
  });

  it("a PaymentIntent captured by someone else before our capture counts as captured, not failed", async () => {
    const id = await authorized();
    await stripe.paymentIntents.capture(id, {}, { idempotencyKey: `someone-else-${id}` });
    await expect(gateway.capture(id, `capture-${id}`)).resolves.toEqual({
      paymentIntentId: id,
      alreadyCaptured: true,
      amountCaptured: 3490,
      currency: "eur",
    });
  });

  it("someone else's partial capture: the amount Stripe took, not the amount authorized", async () => {
    const id = await authorized();
    await stripe.paymentIntents.capture(id, { amount_to_capture: 1000 }, { idempotencyKey: `partial-${id}` });
    await expect(gateway.capture(id, `capture-${id}`)).resolves.toMatchObject({
      alreadyCaptured: true,
      amountCaptured: 1000,
    });
  });

  it("a PaymentIntent in another state (processing) is not capturable, naming the state", async () => {
    const id = await authorized();
    Object.assign(defined(sandbox.paymentIntent(id)), { status: "processing" });
    const error = await rejection(id);
    expect(error).toMatchObject({ reason: "unexpected_state", label: "payment not capturable" });
    expect(error.message).toContain("cannot be captured (processing)");
  });
});

describe("a lapsed authorization is labelled the same wherever it is reported", () => {
  const lookup = () => Promise.reject(new Error("not asked"));

  it.each([
    ["expired", true],
    ["automatic", true],
    ["requested_by_customer", false],
    ["fraudulent", false],
  ] as const)("payment_intent.canceled with cancellation_reason %s", async (reason, lapsed) => {
    const event = fixtureEvent(
      "payment_intent.canceled",
      fixturePaymentIntent({ id: "pi_lapse", status: "canceled", cancellation_reason: reason }),
    );
    // A cancelled PaymentIntent is planned without reading the order's terms.
    const plan = await planFor(event, lookup, { orderId: "unused", total: 0, currency: "usd" });
    expect(plan).toMatchObject({ kind: "authorization-lost", paymentIntentId: "pi_lapse" });
    const text = (plan as { reason: string }).reason;
    if (lapsed) expect(text).toBe("The card authorization expired before it was captured");
    else expect(text).toContain(`voided outside this service (${reason})`);
    expect(isLapsedAuthorization(reason)).toBe(lapsed);
  });
});

describe("the Stripe payment gateway charges a card saved at checkout off-session", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;
  let gateway: PaymentGateway;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
    gateway = createStripePaymentGateway(stripe);
  });
  afterAll(() => sandbox.close());
  afterEach(() => sandbox.clearFailures());

  /** A checkout paid as src/payments/stripe-checkout.ts asks for it: a Customer, the card saved. */
  async function savedCard() {
    const session = await stripe.checkout.sessions.create(
      sessionParams({
        customer_creation: "always",
        payment_intent_data: { capture_method: "manual", setup_future_usage: "off_session" },
      }),
    );
    const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized", {
      deliver: false,
    });
    const intent = defined(paymentIntent);
    return { customerId: intent.customer as string, paymentMethodId: intent.payment_method as string };
  }

  const creates = (key: string) =>
    sandbox.requests.filter((r) => r.endpoint === "payment_intents.create" && r.idempotencyKey === key);

  it("charges once per key: the retried call is Stripe's replay of the same PaymentIntent", async () => {
    const card = await savedCard();
    const charge = { ...card, amount: 1000, currency: "EUR", metadata: { returnId: "r-a" } };
    const first = await gateway.chargeOffSession(charge, "exchange-charge-r-a");
    expect(first).toMatchObject({ amount: 1000, currency: "eur", replayed: false });
    const again = await gateway.chargeOffSession(charge, "exchange-charge-r-a");
    expect(again).toEqual({ ...first, replayed: true });
    expect(creates("exchange-charge-r-a").map((r) => r.replayed)).toEqual([false, true]);
    const intent = await stripe.paymentIntents.retrieve(first.paymentIntentId);
    expect(intent).toMatchObject({ status: "succeeded", customer: card.customerId, amount_received: 1000 });
  });

  it("authentication required is a rejection naming Stripe's PaymentIntent, the same on every retry", async () => {
    const card = await savedCard();
    sandbox.injectFailure("payment_intents.create", { kind: "decline", code: "authentication_required" });
    const charge = { ...card, amount: 700, currency: "eur", metadata: {} };
    const first = await gateway.chargeOffSession(charge, "exchange-charge-r-b").catch((e: unknown) => e);
    expect(first).toBeInstanceOf(PaymentRejectedError);
    const rejected = first as PaymentRejectedError;
    expect(rejected.reason).toBe("authentication_required");
    expect(rejected.message).toMatch(/^authentication required/);
    expect(rejected.paymentIntentId).toMatch(/^pi_/);
    const again = await gateway.chargeOffSession(charge, "exchange-charge-r-b").catch((e: unknown) => e);
    expect((again as PaymentRejectedError).paymentIntentId).toBe(rejected.paymentIntentId);
    expect((await stripe.paymentIntents.retrieve(defined(rejected.paymentIntentId))).status).toBe(
      "requires_payment_method",
    );
  });

  it("a plain decline is a decline", async () => {
    const card = await savedCard();
    sandbox.injectFailure("payment_intents.create", { kind: "decline", code: "insufficient_funds" });
    const error = await gateway
      .chargeOffSession({ ...card, amount: 700, currency: "eur", metadata: {} }, "exchange-charge-r-c")
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: "declined" });
  });
});
