import Stripe from "stripe";
import type { StripeSandbox } from "../../../src/dev/stripe-sandbox";
import { sessionParams, startSandbox } from "./harness";
import { defined } from "../../support/defined";

describe("Stripe sandbox API through stripe-node", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;

  beforeAll(async () => {
    ({ sandbox, stripe } = await startSandbox());
  });
  afterAll(() => sandbox.close());
  afterEach(() => sandbox.clearFailures());

  it("creates and retrieves a Checkout Session with the options we send, in Stripe's shape", async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    expect(session).toMatchObject({
      object: "checkout.session",
      mode: "payment",
      status: "open",
      payment_status: "unpaid",
      amount_total: 3490,
      currency: "eur",
      client_reference_id: "8d7f6f57-6a53-4a3e-9a65-0f0e0e3f7f10",
      metadata: { orderId: "8d7f6f57-6a53-4a3e-9a65-0f0e0e3f7f10", customerId: "cus-42" },
      payment_intent: null,
      livemode: false,
    });
    expect(session.id).toMatch(/^cs_test_/);
    expect(session.url).toContain(`/_sandbox/pay/${session.id}`);
    // Fields we never set keep the fixture's shape.
    expect(session).toHaveProperty("automatic_tax.enabled", false);

    const retrieved = await stripe.checkout.sessions.retrieve(session.id, { expand: ["line_items"] });
    expect(
      retrieved.line_items?.data.map((item) => [item.description, item.quantity, item.amount_total]),
    ).toEqual([
      ["Mug", 2, 2500],
      ["Tea, 100 g", 1, 990],
    ]);
  });

  it("answers Stripe's validation errors", async () => {
    await expect(
      stripe.checkout.sessions.create({ ...sessionParams(), line_items: [] }),
    ).rejects.toMatchObject({
      type: "StripeInvalidRequestError",
      code: "parameter_missing",
      param: "line_items",
    });
    await expect(stripe.checkout.sessions.retrieve("cs_test_nope")).rejects.toMatchObject({
      type: "StripeInvalidRequestError",
      statusCode: 404,
      code: "resource_missing",
    });
    const unknown = { ...sessionParams(), shiny: "yes" } as Stripe.Checkout.SessionCreateParams;
    await expect(stripe.checkout.sessions.create(unknown)).rejects.toMatchObject({
      code: "parameter_unknown",
      param: "shiny",
    });
    const anonymous = new Stripe("pk_test_publishable", {
      host: "127.0.0.1",
      port: Number(new URL(sandbox.url as string).port),
      protocol: "http",
    });
    await expect(anonymous.paymentIntents.retrieve("pi_x")).rejects.toMatchObject({ statusCode: 401 });
  });

  it("replays a request with the same idempotency key and refuses the key with other parameters", async () => {
    const first = await stripe.checkout.sessions.create(sessionParams(), {
      idempotencyKey: "checkout-order-1",
    });
    const again = await stripe.checkout.sessions.create(sessionParams(), {
      idempotencyKey: "checkout-order-1",
    });
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers["idempotent-replayed"]).toBe("true");
    expect(first.lastResponse.headers["idempotent-replayed"]).toBeUndefined();

    const other = sessionParams({ client_reference_id: "someone-else" });
    const refused = await stripe.checkout.sessions
      .create(other, { idempotencyKey: "checkout-order-1" })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(refused).toMatchObject({ type: "StripeIdempotencyError", statusCode: 400 });
  });

  it("captures an authorization once, and refuses to capture a canceled one", async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized");
    expect(paymentIntent).toMatchObject({
      status: "requires_capture",
      amount_capturable: 3490,
      capture_method: "manual",
    });

    const captured = await stripe.paymentIntents.capture(
      defined(paymentIntent).id,
      {},
      { idempotencyKey: "capture-1" },
    );
    expect(captured).toMatchObject({ status: "succeeded", amount_received: 3490, amount_capturable: 0 });
    await expect(stripe.paymentIntents.capture(defined(paymentIntent).id)).rejects.toMatchObject({
      code: "payment_intent_unexpected_state",
      payment_intent: { id: defined(paymentIntent).id, status: "succeeded" },
    });

    const expiring = await stripe.checkout.sessions.create(sessionParams());
    const authorized = await sandbox.completeCheckoutSession(expiring.id, "authorized");
    const expired = await sandbox.expireAuthorization(defined(authorized.paymentIntent).id);
    expect(expired.events.map((event) => event.type)).toEqual(["charge.expired", "payment_intent.canceled"]);
    // Stripe expired the uncaptured charge: its own code, not a generic state error.
    await expect(stripe.paymentIntents.capture(defined(authorized.paymentIntent).id)).rejects.toMatchObject({
      type: "StripeInvalidRequestError",
      statusCode: 400,
      code: "charge_expired_for_capture",
      payment_intent: { status: "canceled", cancellation_reason: "expired" },
    });
  });

  it("captures part of an authorization as Stripe does: the rest released, only the captured part refundable", async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized");
    const id = defined(paymentIntent).id;
    const eventsBefore = sandbox.events().length;

    const captured = await stripe.paymentIntents.capture(id, { amount_to_capture: 2500 });
    expect(captured).toMatchObject({
      status: "succeeded",
      amount: 3490,
      amount_received: 2500,
      amount_capturable: 0,
    });
    // Stripe counts the released 990 in amount_refunded; the charge is not "refunded" (in full).
    const charge = (await stripe.paymentIntents.retrieve(id, { expand: ["latest_charge"] }))
      .latest_charge as Stripe.Charge;
    expect(charge).toMatchObject({
      amount: 3490,
      amount_captured: 2500,
      amount_refunded: 990,
      captured: true,
      refunded: false,
    });
    expect(
      sandbox
        .events()
        .slice(eventsBefore)
        .map((event) => event.type),
    ).toEqual(["charge.captured", "payment_intent.succeeded"]);
    // An authorization is captured once: the released part cannot be captured later.
    await expect(stripe.paymentIntents.capture(id, { amount_to_capture: 990 })).rejects.toMatchObject({
      code: "payment_intent_unexpected_state",
    });

    // What can be refunded is the 2500 captured, not the 3490 authorized.
    await expect(stripe.refunds.create({ payment_intent: id, amount: 2501 })).rejects.toMatchObject({
      code: "amount_too_large",
    });
    const part = await stripe.refunds.create({ payment_intent: id, amount: 1000 });
    expect(part.amount).toBe(1000);
    const rest = await stripe.refunds.create({ payment_intent: id });
    expect(rest.amount).toBe(1500);
    const after = (await stripe.paymentIntents.retrieve(id, { expand: ["latest_charge"] }))
      .latest_charge as Stripe.Charge;
    expect(after).toMatchObject({ amount_captured: 2500, amount_refunded: 3490, refunded: true });
    await expect(stripe.refunds.create({ payment_intent: id })).rejects.toMatchObject({
      code: "charge_already_refunded",
    });
  });

  it("cancels an authorization and refunds a captured payment, within Stripe's limits", async () => {
    const toVoid = await stripe.checkout.sessions.create(sessionParams());
    const { paymentIntent: authorized } = await sandbox.completeCheckoutSession(toVoid.id, "authorized");
    const canceled = await stripe.paymentIntents.cancel(defined(authorized).id, {
      cancellation_reason: "abandoned",
    });
    expect(canceled).toMatchObject({ status: "canceled", cancellation_reason: "abandoned" });
    await expect(stripe.paymentIntents.cancel(defined(authorized).id)).rejects.toMatchObject({
      code: "payment_intent_unexpected_state",
    });
    await expect(stripe.refunds.create({ payment_intent: defined(authorized).id })).rejects.toMatchObject({
      code: "payment_intent_unexpected_state",
    });

    const paid = await stripe.checkout.sessions.create(
      sessionParams({ payment_intent_data: { capture_method: "automatic" } }),
    );
    const { paymentIntent } = await sandbox.completeCheckoutSession(paid.id, "paid");
    const partial = await stripe.refunds.create({ payment_intent: defined(paymentIntent).id, amount: 490 });
    expect(partial).toMatchObject({
      object: "refund",
      amount: 490,
      status: "succeeded",
      payment_intent: defined(paymentIntent).id,
    });
    await expect(
      stripe.refunds.create({ payment_intent: defined(paymentIntent).id, amount: 5000 }),
    ).rejects.toMatchObject({
      code: "amount_too_large",
    });
    const rest = await stripe.refunds.create({ payment_intent: defined(paymentIntent).id });
    expect(rest.amount).toBe(3000);
    await expect(stripe.refunds.create({ payment_intent: defined(paymentIntent).id })).rejects.toMatchObject({
      code: "charge_already_refunded",
    });
  });

  it("injects 500s, declines and hangs per endpoint", async () => {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized");
    const id = defined(paymentIntent).id;

    sandbox.injectFailure("payment_intents.retrieve", { kind: "server_error" }, 2);
    await expect(stripe.paymentIntents.retrieve(id)).rejects.toBeInstanceOf(Stripe.errors.StripeAPIError);
    await expect(stripe.paymentIntents.retrieve(id)).rejects.toMatchObject({ statusCode: 500 });
    await expect(stripe.paymentIntents.retrieve(id)).resolves.toMatchObject({ id });

    sandbox.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });
    await expect(stripe.paymentIntents.capture(id)).rejects.toMatchObject({
      type: "StripeCardError",
      code: "card_declined",
      decline_code: "generic_decline",
      payment_intent: { id },
    });

    const port = Number(new URL(sandbox.url as string).port);
    const shortTimeout = new Stripe("sk_test_sandbox", {
      host: "127.0.0.1",
      port,
      protocol: "http",
      timeout: 300,
      maxNetworkRetries: 0,
    });
    sandbox.injectFailure("payment_intents.capture", { kind: "hang", afterProcessing: true });
    await expect(
      shortTimeout.paymentIntents.capture(id, {}, { idempotencyKey: "capture-lost-answer" }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeConnectionError);
    // The capture happened although its answer was lost: the retry with the same key replays it.
    const replay = await stripe.paymentIntents.capture(id, {}, { idempotencyKey: "capture-lost-answer" });
    expect(replay.status).toBe("succeeded");
    expect(replay.lastResponse.headers["idempotent-replayed"]).toBe("true");
  });
});
