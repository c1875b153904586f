import express, { Router, type Request } from "express";
import Stripe from "stripe";
import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import type { StripeIntake } from "./stripe-intake";

export const stripeWebhookPath = "/api/stripe/webhook";

export interface WebhookObserver {
  observeWebhook(type: string, outcome: string, seconds: number): void;
}

/** Stripe's default tolerance, applied both ways: stripe-node only refuses timestamps in the past. */
const toleranceSeconds = 300;

function verifiedEvent(raw: Buffer, signature: string | undefined, secret: string): Stripe.Event {
  if (!signature) throw new AppError("invalid_signature", "Missing Stripe-Signature header");
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(raw, signature, secret, toleranceSeconds);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      throw new AppError("invalid_signature", "Stripe-Signature does not match the body, or is too old", {
        cause: error,
      });
    }
    // A correctly signed body that is not JSON: only a broken sender does that.
    throw new AppError("invalid_json", "Webhook body is not valid JSON", { cause: error });
  }
  const timestamp = Number(/(?:^|,)t=(\d+)/.exec(signature)?.[1]);
  if (timestamp > Date.now() / 1000 + toleranceSeconds) {
    throw new AppError("invalid_signature", "Stripe-Signature timestamp is in the future");
  }
  // Signed but not an event (`null`, no `data.object`): a client error, not ours to retry on.
  const shape = event as unknown as { id?: unknown; type?: unknown; data?: { object?: unknown } } | null;
  if (
    typeof shape !== "object" ||
    shape === null ||
    typeof shape.id !== "string" ||
    typeof shape.type !== "string" ||
    typeof shape.data?.object !== "object" ||
    shape.data.object === null
  ) {
    throw new AppError("validation_failed", "Webhook body is not a Stripe event");
  }
  return event;
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
  const rawBody = express.raw({ type: () => true, limit: "1mb" });
  const router = Router();
  router.post(
    stripeWebhookPath,
    (req, res, next) => {
      // Mounted before the access log (src/app.ts): the shared logger stands in for the
      // per-request one, so the error handler can log a failure here too.
      req.log = logger;
      rawBody(req, res, (error?: unknown) => {
        if (error) {
          // A body too large or unreadable: answered 4xx by the error handler, logged here.
          logger.warn(
            { reason: error instanceof Error ? error.message : String(error) },
            "Stripe webhook rejected",
          );
        }
        next(error);
      });
    },
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
