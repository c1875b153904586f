import type { IncomingMessage, ServerResponse } from "node:http";
import express, { Router } from "express";
import Stripe from "stripe";
import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import type { StripeIntake } from "./stripe-intake";
import { warmUpFirstDelivery } from "./warm-up";

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
 * Answers 200 with `value` as JSON, with node's response alone. res.json() would also hash the body
 * into an ETag (SHA-1) and re-derive the charset on every delivery: work for caching, and nothing
 * caches or revalidates a webhook's answer. Same body and Content-Type as res.json()
 * (docs/decisions/0009-stripe-webhook-served-before-express.md).
 */
function answerJson(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
  });
  res.end(body);
}

const rejectionReason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * POST /api/stripe/webhook, served with node's own request and response: src/app.ts answers the
 * route's exact URL before express sets a request up, and `router` serves what express also
 * matches (a query string, a trailing slash, other letter case) the same way
 * (docs/decisions/0009-stripe-webhook-served-before-express.md).
 */
export interface StripeWebhookEndpoint {
  /**
   * Serves one delivery. An error to be answered (4xx, 5xx) goes to `fail`, the app's error
   * handling, with `req.log` set so that it can log there; nothing has been written then.
   */
  serve(req: IncomingMessage, res: ServerResponse, fail: (error: unknown) => void): void;
  /** The same as an express route, for the URLs src/app.ts leaves to express. */
  router: Router;
  /**
   * Runs a first delivery's pure parts on a made-up event (./warm-up.ts), for start-up: no I/O.
   * Resolves to the rounds run.
   */
  warmUp(rounds?: number): Promise<number>;
}

/**
 * Stripe signs the exact bytes it sends, so the body is read raw (1 MB at most, 413 beyond) and the
 * route must come before any JSON parser. Verification uses Stripe's default 300 s tolerance;
 * nothing is stored before it passes.
 */
export function stripeWebhookEndpoint(deps: {
  intake: StripeIntake;
  webhookSecret: string;
  logger: Logger;
  metrics?: WebhookObserver;
}): StripeWebhookEndpoint {
  const logger = deps.logger.child({ component: "stripe-webhook" });
  // body-parser reads node's request alone (headers, stream): it needs nothing express adds.
  const rawBody = express.raw({ type: () => true, limit: "1mb" }) as unknown as (
    req: IncomingMessage,
    res: ServerResponse,
    next: (error?: unknown) => void,
  ) => void;

  const deliver = async (req: IncomingMessage & { body?: unknown }, res: ServerResponse): Promise<void> => {
    const started = process.hrtime.bigint();
    const observe = (type: string, outcome: string) =>
      deps.metrics?.observeWebhook(type, outcome, Number(process.hrtime.bigint() - started) / 1e9);
    const signature = req.headers["stripe-signature"];
    let event: Stripe.Event;
    try {
      event = verifiedEvent(
        Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
        typeof signature === "string" ? signature : undefined,
        deps.webhookSecret,
      );
    } catch (error) {
      logger.warn({ reason: rejectionReason(error) }, "Stripe webhook rejected");
      observe("unverified", "rejected");
      throw error;
    }
    try {
      const result = await deps.intake.handle(event);
      observe(event.type, result.outcome);
      answerJson(res, { received: true, ...result });
    } catch (error) {
      observe(event.type, "failed");
      throw error;
    }
  };

  const serve: StripeWebhookEndpoint["serve"] = (req, res, fail) => {
    // Served before the access log (src/app.ts): the shared logger stands in for the
    // per-request one, so the error handler can log a failure here too.
    req.log = logger;
    rawBody(req, res, (error?: unknown) => {
      if (error) {
        // A body too large or unreadable: answered 4xx by the error handler, logged here.
        logger.warn({ reason: rejectionReason(error) }, "Stripe webhook rejected");
        fail(error);
        return;
      }
      // As express does with a rejected handler: a falsy rejection still fails the request.
      deliver(req, res).catch((failure: unknown) => fail(failure || new Error("Rejected promise")));
    });
  };

  const router = Router();
  router.post(stripeWebhookPath, (req, res, next) => serve(req, res, next));
  const warmUp = (rounds?: number) =>
    warmUpFirstDelivery((raw, signature, secret) => verifiedEvent(raw, signature, secret), rounds);
  return { serve, router, warmUp };
}
