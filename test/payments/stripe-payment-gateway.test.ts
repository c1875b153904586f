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
 * Issue 15: what the payment gateway makes of each capture failure Stripe produces, against the
 * sandbox through stripe-node. A rejection is final (the workflow does not retry it) and carries
 * the reason the compensation reads and the words ops see.
 */
describe("issue 15: the Stripe payment gateway classifies capture failures", () => {
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

  it("a PaymentIntent Stripe canceled as expired is not even sent to capture", async () => {
    const id = await authorized();
    await sandbox.advanceClock(8 * day);
    expect(sandbox.paymentIntent(id)?.cancellation_reason).toBe("expired");
    const error = await rejection(id);
    expect(error).toMatchObject({ reason: "authorization_expired", label: "authorization expired" });
    expect(error.message).toContain("cancellation_reason expired");
    expect(capturesOf(id)).toHaveLength(0);
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

  it("a PaymentIntent captured between our look and our capture counts as captured, not failed", async () => {
    const id = await authorized();
    // Our retrieve is answered late, after someone else captured: our capture then meets
    // payment_intent_unexpected_state with the PaymentIntent succeeded.
    sandbox.injectFailure("payment_intents.retrieve", { kind: "hang", ms: 1_500, afterProcessing: true });
    const ours = gateway.capture(id, `capture-race-${id}`);
    const retrieved = () =>
      sandbox.requests.some((r) => r.endpoint === "payment_intents.retrieve" && r.path.includes(id));
    while (!retrieved()) await new Promise((resolve) => setTimeout(resolve, 5));
    await stripe.paymentIntents.capture(id, {}, { idempotencyKey: `someone-else-${id}` });
    await expect(ours).resolves.toMatchObject({
      paymentIntentId: id,
      alreadyCaptured: true,
      amountCaptured: 3490,
    });
  });
});

describe("issue 15: a lapsed authorization is labelled the same wherever it is reported", () => {
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
