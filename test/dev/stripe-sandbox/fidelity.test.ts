import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Stripe from "stripe";
import { createStripeSandbox, type StripeSandbox } from "../../../src/dev/stripe-sandbox";
import { defined } from "../../support/defined";
import { logger, sessionParams, startSandbox, startWebhookReceiver, webhookSecret } from "./harness";

const day = 24 * 3600_000;

/** Where the sandbox used to differ from Stripe's documented behaviour, it now behaves as documented. */
describe("Stripe sandbox fidelity", () => {
  let sandbox: StripeSandbox;
  let stripe: Stripe;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    ({ sandbox, stripe } = await startSandbox({ webhookUrl: receiver.url, retryDelaysMs: [] }));
  });
  afterAll(async () => {
    await sandbox.close();
    await receiver.close();
  });
  afterEach(() => sandbox.clearFailures());

  async function authorized(): Promise<{ sessionId: string; paymentIntentId: string }> {
    const session = await stripe.checkout.sessions.create(sessionParams());
    const { paymentIntent } = await sandbox.completeCheckoutSession(session.id, "authorized", {
      deliver: false,
    });
    return { sessionId: session.id, paymentIntentId: defined(paymentIntent).id };
  }

  const receivedTypes = (paymentIntentId: string): string[] =>
    receiver.received
      .map((delivery) => JSON.parse(delivery.body) as Stripe.Event)
      .filter((event) => JSON.stringify(event.data.object).includes(paymentIntentId))
      .map((event) => event.type);

  describe("a Checkout Session that is no longer open has url: null", () => {
    it("once completed", async () => {
      const session = await stripe.checkout.sessions.create(sessionParams());
      expect(session.url).toContain(session.id);
      await sandbox.completeCheckoutSession(session.id, "authorized", { deliver: false });
      const completed = await stripe.checkout.sessions.retrieve(session.id);
      expect(completed).toMatchObject({ status: "complete", url: null });
    });

    it("once expired", async () => {
      const session = await stripe.checkout.sessions.create(sessionParams());
      const expired = await stripe.checkout.sessions.expire(session.id);
      expect(expired).toMatchObject({ status: "expired", url: null });
      expect((await stripe.checkout.sessions.retrieve(session.id)).url).toBeNull();
    });
  });

  describe("cancelling a Checkout Session's PaymentIntent", () => {
    it("is refused unless it awaits capture, telling to expire the Checkout Session instead", async () => {
      const session = await stripe.checkout.sessions.create(sessionParams());
      // A declined attempt leaves the session open with a PaymentIntent in requires_payment_method.
      const declined = await sandbox.completeCheckoutSession(session.id, "declined", { deliver: false });
      const paymentIntentId = defined(declined.paymentIntent).id;
      const refused = await stripe.paymentIntents
        .cancel(paymentIntentId, { cancellation_reason: "abandoned" })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(refused).toMatchObject({
        statusCode: 400,
        code: "payment_intent_unexpected_state",
        payment_intent: { id: paymentIntentId, status: "requires_payment_method" },
      });
      expect((refused as Error).message).toMatch(/expire the Checkout Session instead/);
      expect((refused as Error).message).toContain(`/v1/checkout/sessions/${session.id}/expire`);
      expect(sandbox.paymentIntent(paymentIntentId)?.status).toBe("requires_payment_method");
      // What Stripe says to do works, and cancels the PaymentIntent with it.
      await stripe.checkout.sessions.expire(session.id);
      expect(sandbox.paymentIntent(paymentIntentId)).toMatchObject({
        status: "canceled",
        cancellation_reason: "abandoned",
      });
    });

    it("is allowed when it awaits capture (releasing the hold)", async () => {
      const { paymentIntentId } = await authorized();
      await expect(
        stripe.paymentIntents.cancel(paymentIntentId, { cancellation_reason: "abandoned" }),
      ).resolves.toMatchObject({ status: "canceled", cancellation_reason: "abandoned" });
    });
  });

  describe("authorizations lapse on the sandbox clock", () => {
    it("publishes when the authorization lapses (charge.payment_method_details.card.capture_before)", async () => {
      const before = sandbox.clock().now;
      const { paymentIntentId } = await authorized();
      const intent = await stripe.paymentIntents.retrieve(paymentIntentId, { expand: ["latest_charge"] });
      const charge = intent.latest_charge as Stripe.Charge;
      const captureBefore = defined(charge.payment_method_details?.card?.capture_before);
      expect(captureBefore * 1000).toBeGreaterThanOrEqual(before + 7 * day - 1000);
      expect(captureBefore * 1000).toBeLessThanOrEqual(sandbox.clock().now + 7 * day);
    });

    it("before Stripe expires it, a capture fails with capture_charge_authorization_expired; after, with charge_expired_for_capture", async () => {
      const { paymentIntentId } = await authorized();
      const fresh = await authorized();
      await sandbox.advanceClock(7 * day + 60_000, { expire: false });
      expect(sandbox.paymentIntent(paymentIntentId)?.status).toBe("requires_capture");

      const early = await stripe.paymentIntents.capture(paymentIntentId).catch((error: unknown) => error);
      expect(early).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(early).toMatchObject({
        statusCode: 400,
        code: "capture_charge_authorization_expired",
        payment_intent: { id: paymentIntentId, status: "requires_capture" },
      });

      const lapse = await sandbox.expireLapsedAuthorizations();
      expect(lapse.paymentIntents.map((paymentIntent) => paymentIntent.id)).toEqual(
        expect.arrayContaining([paymentIntentId, fresh.paymentIntentId]),
      );
      expect(sandbox.paymentIntent(paymentIntentId)).toMatchObject({
        status: "canceled",
        cancellation_reason: "expired",
        amount_capturable: 0,
      });
      expect(receivedTypes(paymentIntentId)).toEqual(["charge.expired", "payment_intent.canceled"]);
      const canceled = lapse.events.find(
        (event) => event.type === "payment_intent.canceled" && event.data.object.id === paymentIntentId,
      );
      expect(canceled?.data.object).toMatchObject({ cancellation_reason: "expired" });

      await expect(stripe.paymentIntents.capture(paymentIntentId)).rejects.toMatchObject({
        type: "StripeInvalidRequestError",
        statusCode: 400,
        code: "charge_expired_for_capture",
        payment_intent: { id: paymentIntentId, status: "canceled", cancellation_reason: "expired" },
      });
    });

    it("the window is configurable and lapses exactly when the clock passes it", async () => {
      const short = await startSandbox({ authorizationWindowMs: 3600_000 });
      try {
        const session = await short.stripe.checkout.sessions.create(sessionParams());
        const { paymentIntent } = await short.sandbox.completeCheckoutSession(session.id, "authorized");
        const id = defined(paymentIntent).id;
        expect((await short.sandbox.advanceClock(59 * 60_000)).paymentIntents).toEqual([]);
        expect(short.sandbox.paymentIntent(id)?.status).toBe("requires_capture");
        const lapse = await short.sandbox.advanceClock(2 * 60_000);
        expect(lapse.paymentIntents.map((paymentIntent) => paymentIntent.id)).toEqual([id]);
        expect(short.sandbox.paymentIntent(id)?.cancellation_reason).toBe("expired");
        expect(short.sandbox.clock()).toMatchObject({
          advancedMs: 61 * 60_000,
          authorizationWindowMs: 3600_000,
        });
      } finally {
        await short.sandbox.close();
      }
    });

    it("a capture within the window still succeeds", async () => {
      const { paymentIntentId } = await authorized();
      await sandbox.advanceClock(6 * day);
      await expect(stripe.paymentIntents.capture(paymentIntentId)).resolves.toMatchObject({
        status: "succeeded",
      });
    });

    it("keeps the advanced clock across restarts of a sandbox with a state file", async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "stripe-sandbox-clock-"));
      const stateFile = path.join(dir, "state.json");
      try {
        const first = createStripeSandbox({ webhookSecret, logger, stateFile });
        await first.advanceClock(2 * day);
        await first.close();
        const second = createStripeSandbox({ webhookSecret, logger, stateFile });
        expect(second.clock().advancedMs).toBe(2 * day);
        await second.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("with expiryIntervalMs, lapsed holds expire on their own while the sandbox listens", async () => {
      const background = await startSandbox({ authorizationWindowMs: 1, expiryIntervalMs: 10 });
      try {
        const session = await background.stripe.checkout.sessions.create(sessionParams());
        const { paymentIntent } = await background.sandbox.completeCheckoutSession(session.id, "authorized");
        const id = defined(paymentIntent).id;
        while (background.sandbox.paymentIntent(id)?.status === "requires_capture") {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(background.sandbox.paymentIntent(id)).toMatchObject({
          status: "canceled",
          cancellation_reason: "expired",
        });
      } finally {
        await background.sandbox.close();
      }
    });

    it("is driven over the control routes too", async () => {
      const { paymentIntentId } = await authorized();
      const base = defined(sandbox.url);
      const advanced = await fetch(`${base}/_sandbox/clock/advance`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ms: 8 * day }),
      });
      expect(advanced.status).toBe(200);
      const body = (await advanced.json()) as { paymentIntents: string[] };
      expect(body.paymentIntents).toContain(paymentIntentId);
      const clock = (await (await fetch(`${base}/_sandbox/clock`)).json()) as { advancedMs: number };
      expect(clock.advancedMs).toBeGreaterThanOrEqual(8 * day);
      const backwards = await fetch(`${base}/_sandbox/clock/advance`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ms: -1 }),
      });
      expect(backwards.status).toBe(400);
    });
  });

  describe("failure injection at capture answers what Stripe answers", () => {
    it.each([
      ["charge_expired_for_capture"],
      ["capture_charge_authorization_expired"],
      ["capture_unauthorized_payment"],
    ] as const)("%s: 400 invalid_request_error with the PaymentIntent attached", async (code) => {
      const { paymentIntentId } = await authorized();
      sandbox.injectFailure("payment_intents.capture", { kind: "capture_failure", code });
      const error = await stripe.paymentIntents.capture(paymentIntentId).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error).toMatchObject({
        statusCode: 400,
        rawType: "invalid_request_error",
        code,
        doc_url: `https://stripe.com/docs/error-codes/${code.replace(/_/g, "-")}`,
        payment_intent: { id: paymentIntentId },
      });
    });

    it("an issuer decline stays a 402 card_error; authorization-time declines are not capture answers", async () => {
      const { paymentIntentId } = await authorized();
      sandbox.injectFailure("payment_intents.capture", { kind: "decline", code: "card_declined" });
      const error = await stripe.paymentIntents.capture(paymentIntentId).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
      expect(error).toMatchObject({
        statusCode: 402,
        code: "card_declined",
        decline_code: "generic_decline",
        payment_intent: { id: paymentIntentId },
      });
      for (const code of ["insufficient_funds", "expired_card", "authentication_required"] as const) {
        expect(() => sandbox.injectFailure("payment_intents.capture", { kind: "decline", code })).toThrow(
          /does not answer a capture/,
        );
      }
    });

    it("capture_failure is for captures only, and settable over the control route", async () => {
      expect(() =>
        sandbox.injectFailure("refunds.create", {
          kind: "capture_failure",
          code: "charge_expired_for_capture",
        }),
      ).toThrow(/payment_intents.capture only/);
      const res = await fetch(`${defined(sandbox.url)}/_sandbox/failures`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          endpoint: "payment_intents.capture",
          kind: "capture_failure",
          code: "capture_charge_authorization_expired",
        }),
      });
      expect(res.status).toBe(201);
      const refused = await fetch(`${defined(sandbox.url)}/_sandbox/failures`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ endpoint: "payment_intents.capture", kind: "decline", code: "expired_card" }),
      });
      expect(refused.status).toBe(400);
      const { paymentIntentId } = await authorized();
      await expect(stripe.paymentIntents.capture(paymentIntentId)).rejects.toMatchObject({
        code: "capture_charge_authorization_expired",
      });
    });
  });
});
