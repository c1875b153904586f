import Stripe from "stripe";
import { stripeWebhookEndpoint } from "../../../src/orders/intake/stripe-webhook-route";
import type { StripeIntake } from "../../../src/orders/intake/stripe-intake";
import { warmUpFirstDelivery } from "../../../src/orders/intake/warm-up";
import { captureLog } from "../../support/log-capture";

describe("the Stripe webhook's start-up warm-up", () => {
  it("runs the first delivery's pure parts without handing anything to the intake or logging", async () => {
    const handled: Stripe.Event[] = [];
    const intake: StripeIntake = {
      handle: (event) => {
        handled.push(event);
        return Promise.resolve({ outcome: "processed", announced: false });
      },
    };
    const log = captureLog();
    const endpoint = stripeWebhookEndpoint({
      intake,
      webhookSecret: "whsec_real_0123456789",
      logger: log.logger,
    });

    await expect(endpoint.warmUp(7)).resolves.toBe(7);

    expect(handled).toEqual([]);
    expect(log.lines()).toEqual([]);
  });

  it("verifies with a secret of its own: what it signs does not pass the real secret's check", async () => {
    const secrets: string[] = [];
    const events: Stripe.Event[] = [];
    await warmUpFirstDelivery((raw, signature, secret) => {
      secrets.push(secret);
      expect(() => Stripe.webhooks.constructEvent(raw, signature, "whsec_real_0123456789")).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
      const event = Stripe.webhooks.constructEvent(raw, signature, secret);
      events.push(event);
      return event;
    }, 3);

    expect(secrets).toHaveLength(3);
    expect(new Set(secrets).size).toBe(1);
    expect(secrets[0]).not.toBe("whsec_real_0123456789");
    expect(events.map((event) => event.type)).toEqual(Array(3).fill("checkout.session.completed"));
  });

  it("fails loudly when its made-up event would not be planned as a placement (the wrong path warmed)", async () => {
    await expect(
      warmUpFirstDelivery((raw, signature, secret) => {
        const event = Stripe.webhooks.constructEvent(raw, signature, secret);
        (event.data.object as { mode: string }).mode = "setup";
        return event;
      }, 2),
    ).rejects.toThrow("webhook warm-up planned 0 of 2 rounds");
  });
});
