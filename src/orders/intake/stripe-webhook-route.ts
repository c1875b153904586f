import express, { Router, type Request } from "express";
import Stripe from "stripe";
import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import type { StripeIntake } from "./stripe-intake";

export const stripeWebhookPath = "/api/stripe/webhook";

export interface WebhookObserver {
  observeWebhook(type: string, outcome: string, seconds: number): void;
}

function verifiedEvent(raw: Buffer, signature: string | undefined, secret: string): Stripe.Event {
  if (!signature) throw new AppError("invalid_signature", "Missing Stripe-Signature header");
  try {
    return Stripe.webhooks.constructEvent(raw, signature, secret);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw new AppError("invalid_signature", "Stripe-Signature does not match the body, or is too old", {
        cause: error,
      });
    }
    // A correctly signed body that is not JSON: only a broken sender does that.
    throw new AppError("invalid_json", "Webhook body is not valid JSON", { cause: error });
  }
}

/**
 * POST /api/stripe/webhook. Stripe signs the exact bytes it sends, so this route reads its body
 * raw (1 MB at most, 413 beyond) and must be mounted before any JSON parser. Verification uses
 * Stripe's default 300 s tolerance; nothing is stored before it passes.
 */
export function stripeWebhookRouter(deps: {
  intake: StripeIntake;
  webhookSecret: string;
  logger: Logger;
  metrics?: WebhookObserver;
}): Router {
  const logger = deps.logger.child({ component: "stripe-webhook" });
  const router = Router();
  router.post(
    stripeWebhookPath,
    express.raw({ type: () => true, limit: "1mb" }),
    async (req: Request, res) => {
      const started = process.hrtime.bigint();
      const observe = (type: string, outcome: string) =>
        deps.metrics?.observeWebhook(type, outcome, Number(process.hrtime.bigint() - started) / 1e9);
      let event: Stripe.Event;
      try {
        event = verifiedEvent(
          Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
          req.get("stripe-signature"),
          deps.webhookSecret,
        );
      } catch (error) {
        logger.warn(
          { reason: error instanceof Error ? error.message : String(error) },
          "Stripe webhook rejected",
        );
        observe("unverified", "rejected");
        throw error;
      }
      try {
        const result = await deps.intake.handle(event);
        observe(event.type, result.outcome);
        res.json({ received: true, ...result });
      } catch (error) {
        observe(event.type, "failed");
        throw error;
      }
    },
  );
  return router;
}
