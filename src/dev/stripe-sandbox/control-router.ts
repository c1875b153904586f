import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { z } from "zod";
import { OutcomeNotPossible } from "./checkout-sessions";
import type { ControlResult, LapseResult, SandboxControl } from "./control";
import { StripeApiError } from "./errors";
import type { FailureInjector, InjectedFailure } from "./failures";
import { sandboxEndpoints } from "./failures";
import type { WebhookDeliverer } from "./webhook-delivery";

const deliver = z.boolean().optional();
const declineCode = z.enum([
  "card_declined",
  "authentication_required",
  "insufficient_funds",
  "expired_card",
]);

const captureFailureCode = z.enum([
  "charge_expired_for_capture",
  "capture_charge_authorization_expired",
  "capture_unauthorized_payment",
]);

const schemas = {
  complete: z.object({
    outcome: z.enum(["authorized", "paid", "declined", "async_pending"]),
    deliver,
    declineCode: declineCode.optional(),
    // What the customer types on the hosted page when the session collects an address.
    shipping: z
      .object({
        name: z.string().min(1),
        phone: z.string().optional(),
        address: z.object({
          line1: z.string().min(1),
          line2: z.string().optional(),
          city: z.string().min(1),
          state: z.string().optional(),
          postal_code: z.string().min(1),
          country: z.string().regex(/^[A-Z]{2}$/),
        }),
      })
      .optional(),
    // The shipping option the customer picks (a Shipping Rate id of the session's options).
    shippingRate: z.string().startsWith("shr_").optional(),
  }),
  promotionCode: z.object({ code: z.string().min(1) }),
  async: z.object({ succeeded: z.boolean(), deliver }),
  deliverOnly: z.object({ deliver }),
  advance: z.object({ ms: z.number().int().nonnegative(), expire: z.boolean().optional(), deliver }),
  refund: z.object({
    payment_intent: z.string().min(1),
    amount: z.number().int().positive().optional(),
    reason: z.enum(["duplicate", "fraudulent", "requested_by_customer"]).optional(),
    deliver,
  }),
  dispute: z.object({
    payment_intent: z.string().min(1),
    amount: z.number().int().positive().optional(),
    reason: z.enum(["fraudulent", "product_not_received", "duplicate", "general"]).optional(),
    deliver,
  }),
  closeDispute: z.object({ outcome: z.enum(["won", "lost"]), deliver }),
  review: z.object({ payment_intent: z.string().min(1), deliver }),
  closeReview: z.object({
    reason: z.enum(["approved", "refunded", "refunded_as_fraud", "disputed", "redacted"]),
    deliver,
  }),
  amendCapture: z.object({ amount: z.number().int().positive() }),
  drop: z.object({ type: z.string().min(1), times: z.number().int().positive().optional() }),
  failure: z.object({
    endpoint: z.enum(sandboxEndpoints),
    kind: z.enum(["server_error", "rate_limited", "decline", "capture_failure", "hang"]),
    times: z.number().int().positive().optional(),
    code: z.union([declineCode, captureFailureCode]).optional(),
    ms: z.number().int().nonnegative().optional(),
    afterProcessing: z.boolean().optional(),
  }),
};

type FailureInput = Omit<z.infer<typeof schemas.failure>, "endpoint" | "times">;

function injectedFailure(input: FailureInput): InjectedFailure {
  switch (input.kind) {
    case "decline": {
      const code = input.code === undefined ? undefined : declineCode.parse(input.code);
      return { kind: "decline", ...(code ? { code } : {}) };
    }
    case "capture_failure":
      return { kind: "capture_failure", code: captureFailureCode.parse(input.code) };
    case "hang":
      return {
        kind: "hang",
        ...(input.ms !== undefined ? { ms: input.ms } : {}),
        afterProcessing: input.afterProcessing ?? false,
      };
    default:
      return { kind: input.kind };
  }
}

/** Control responses list events as id and type; the full objects are one GET /v1/events/:id away. */
function summary(result: ControlResult): unknown {
  return { ...result, events: result.events.map((event) => ({ id: event.id, type: event.type })) };
}

function lapseSummary(result: LapseResult): unknown {
  return {
    paymentIntents: result.paymentIntents.map((paymentIntent) => paymentIntent.id),
    events: result.events.map((event) => ({ id: event.id, type: event.type })),
    deliveries: result.deliveries,
  };
}

const param = (req: Request, name: string): string => String(req.params[name]);

/**
 * `/_sandbox/...`: drive the sandbox from tests, scripts or curl. Everything here is what a
 * customer, the card network or the clock would do; none of it exists on the real Stripe API.
 */
export function createControlRouter(deps: {
  control: SandboxControl;
  failures: FailureInjector;
  deliverer: WebhookDeliverer;
  advanceClock(ms: number, options: { deliver?: boolean; expire?: boolean }): Promise<LapseResult>;
  clock(): { now: number; advancedMs: number; authorizationWindowMs: number };
}): Router {
  const { control, failures, deliverer } = deps;
  const router = express.Router();
  router.use(express.json({ limit: "100kb" }));
  const body = (req: Request): unknown => req.body ?? {};

  router.post("/checkout/sessions/:id/complete", async (req, res) => {
    const input = schemas.complete.parse(body(req));
    res.json(summary(await control.completeCheckoutSession(param(req, "id"), input.outcome, input)));
  });
  router.post("/checkout/sessions/:id/promotion_code", (req, res) => {
    const input = schemas.promotionCode.parse(body(req));
    const outcome = control.applyPromotionCode(param(req, "id"), input.code);
    res.status(outcome.error ? 400 : 200).json(outcome);
  });
  router.post("/checkout/sessions/:id/async", async (req, res) => {
    const input = schemas.async.parse(body(req));
    res.json(summary(await control.settleAsyncPayment(param(req, "id"), input.succeeded, input)));
  });
  router.post("/checkout/sessions/:id/expire", async (req, res) => {
    res.json(
      summary(await control.expireCheckoutSession(param(req, "id"), schemas.deliverOnly.parse(body(req)))),
    );
  });
  router.post("/payment_intents/:id/expire_authorization", async (req, res) => {
    res.json(
      summary(await control.expireAuthorization(param(req, "id"), schemas.deliverOnly.parse(body(req)))),
    );
  });
  router.post("/payment_intents/:id/cancel", async (req, res) => {
    res.json(
      summary(await control.cancelAuthorization(param(req, "id"), schemas.deliverOnly.parse(body(req)))),
    );
  });
  router.post("/refunds", async (req, res) => {
    const { payment_intent, deliver: send, ...fields } = schemas.refund.parse(body(req));
    const result = await control.refund({ paymentIntent: payment_intent, ...fields }, { deliver: send });
    res.status(201).json({ ...result, events: result.events.map(({ id, type }) => ({ id, type })) });
  });
  router.post("/disputes", async (req, res) => {
    const { payment_intent, deliver: send, ...fields } = schemas.dispute.parse(body(req));
    const result = await control.dispute({ paymentIntent: payment_intent, ...fields }, { deliver: send });
    res.status(201).json({ ...result, events: result.events.map(({ id, type }) => ({ id, type })) });
  });
  router.post("/disputes/:id/close", async (req, res) => {
    const { outcome, deliver: send } = schemas.closeDispute.parse(body(req));
    const result = await control.closeDispute(param(req, "id"), outcome, { deliver: send });
    res.json({ ...result, events: result.events.map(({ id, type }) => ({ id, type })) });
  });
  router.post("/reviews", async (req, res) => {
    const { payment_intent, deliver: send } = schemas.review.parse(body(req));
    const result = await control.openReview(payment_intent, { deliver: send });
    res.status(201).json({ ...result, events: result.events.map(({ id, type }) => ({ id, type })) });
  });
  router.post("/reviews/:id/close", async (req, res) => {
    const { reason, deliver: send } = schemas.closeReview.parse(body(req));
    const result = await control.closeReview(param(req, "id"), reason, { deliver: send });
    res.json({ ...result, events: result.events.map(({ id, type }) => ({ id, type })) });
  });
  router.post("/payment_intents/:id/amend_capture", (req, res) => {
    const { amount } = schemas.amendCapture.parse(body(req));
    res.json(control.amendCapture(param(req, "id"), amount));
  });
  router.post("/webhooks/drop", (req, res) => {
    const { type, times } = schemas.drop.parse(body(req));
    deliverer.drop(type, times ?? 1);
    res.status(201).json({ pending: deliverer.pendingDrops() });
  });
  router.get("/clock", (_req, res) => {
    res.json(deps.clock());
  });
  router.post("/clock/advance", async (req, res) => {
    const { ms, ...options } = schemas.advance.parse(body(req));
    res.json(lapseSummary(await deps.advanceClock(ms, options)));
  });
  router.post("/authorizations/expire_lapsed", async (req, res) => {
    res.json(lapseSummary(await control.expireLapsedAuthorizations(schemas.deliverOnly.parse(body(req)))));
  });
  router.post("/events/:id/deliver", async (req, res) => {
    res.json(await control.redeliver(param(req, "id")));
  });
  router.get("/events/:id/signed", (req, res) => {
    res.json(control.signedDelivery(param(req, "id")));
  });
  router.get("/deliveries", (_req, res) => {
    res.json({ deliveries: deliverer.results });
  });
  router.post("/failures", (req, res) => {
    const { endpoint, times, ...failure } = schemas.failure.parse(body(req));
    const injected = injectedFailure(failure);
    try {
      failures.inject(endpoint, injected, times ?? 1);
    } catch (error) {
      res.status(400).json({ error: { code: "invalid_failure", message: (error as Error).message } });
      return;
    }
    res.status(201).json({ pending: failures.pending() });
  });
  router.get("/failures", (_req, res) => {
    res.json({ pending: failures.pending() });
  });
  router.delete("/failures", (_req, res) => {
    failures.clear();
    res.json({ pending: [] });
  });

  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof z.ZodError) {
      res.status(400).json({ error: { code: "validation_failed", message: z.prettifyError(error) } });
    } else if (error instanceof OutcomeNotPossible) {
      res.status(409).json({ error: { code: "invalid_state", message: error.message } });
    } else if (error instanceof StripeApiError) {
      res.status(error.status).json({ error: error.body });
    } else {
      const status = (error as { status?: number }).status ?? 500;
      res.status(status).json({
        error: { code: "sandbox_error", message: error instanceof Error ? error.message : String(error) },
      });
    }
  });
  return router;
}
