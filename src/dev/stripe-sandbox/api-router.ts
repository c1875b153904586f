import express, { type NextFunction, type Request, type Response, type Router } from "express";
import Stripe from "stripe";
import type { Origin, Outcome, SandboxContext } from "./context";
import {
  createCheckoutSession,
  expireCheckoutSession,
  listLineItems,
  renderCheckoutSession,
  retrieveCheckoutSession,
} from "./checkout-sessions";
import { validateParams } from "./accepted-params";
import { StripeApiError, stripeErrors } from "./errors";
import { listEvents, retrieveEvent } from "./events";
import type { FailureInjector, InjectedFailure, SandboxEndpoint } from "./failures";
import type { Params } from "./form";
import { parseStripeParams } from "./form";
import type { IdempotencyKeys } from "./idempotency";
import { stripeId } from "./ids";
import type { DeclineCode } from "./errors";
import {
  cancelPaymentIntent,
  capturePaymentIntent,
  createPaymentIntent,
  renderPaymentIntent,
  retrievePaymentIntent,
} from "./payment-intents";
import { listBalanceTransactions, listDisputes, listRefunds } from "./ledger";
import { retrieveDispute } from "./disputes";
import { createRefund, retrieveRefund } from "./refunds";
import {
  createCoupon,
  createPromotionCode,
  listPromotionCodes,
  retrieveCoupon,
  retrievePromotionCode,
} from "./discounts";
import { createShippingRate, retrieveShippingRate } from "./shipping-rates";

export interface RequestLogEntry {
  endpoint: SandboxEndpoint;
  method: string;
  path: string;
  params: Params;
  idempotencyKey: string | null;
  status: number;
  replayed: boolean;
  injected?: InjectedFailure["kind"];
}

interface Call {
  id?: string;
  params: Params;
  origin: Origin;
  /** An injected decline the handler models itself (a create whose payment fails). */
  decline?: DeclineCode;
}

/** `error`: the request executed (its events happened) and Stripe answers with this error. */
type Handler = (ctx: SandboxContext, call: Call) => Outcome<unknown> & { error?: StripeApiError };

/** Endpoints whose injected decline happens inside the request (the object exists, the payment fails). */
const declinedInside: readonly SandboxEndpoint[] = ["payment_intents.create"];

interface Route {
  endpoint: SandboxEndpoint;
  method: "get" | "post";
  path: string;
  handle: Handler;
}

const maxLogEntries = 20_000;

const read = (value: unknown): Outcome<unknown> => ({ result: value, events: [] });
const withoutExpand = ({ expand: _expand, ...params }: Params): Params => params;
const rendered = (
  ctx: SandboxContext,
  call: Call,
  outcome: Outcome<Stripe.PaymentIntent>,
): Outcome<unknown> => ({
  result: renderPaymentIntent(ctx, outcome.result, call.params),
  events: outcome.events,
});
const idOf = (call: Call): string => call.id as string;

const routes: Route[] = [
  {
    endpoint: "checkout.sessions.create",
    method: "post",
    path: "/checkout/sessions",
    handle: (ctx, call) => {
      const outcome = createCheckoutSession(ctx, call.params);
      return { result: renderCheckoutSession(ctx, outcome.result, call.params), events: outcome.events };
    },
  },
  {
    endpoint: "checkout.sessions.retrieve",
    method: "get",
    path: "/checkout/sessions/:id",
    handle: (ctx, call) =>
      read(renderCheckoutSession(ctx, retrieveCheckoutSession(ctx, idOf(call)), call.params)),
  },
  {
    endpoint: "checkout.sessions.line_items",
    method: "get",
    path: "/checkout/sessions/:id/line_items",
    handle: (ctx, call) => read(listLineItems(ctx, idOf(call))),
  },
  {
    endpoint: "checkout.sessions.expire",
    method: "post",
    path: "/checkout/sessions/:id/expire",
    handle: (ctx, call) => {
      const outcome = expireCheckoutSession(ctx, idOf(call), call.origin);
      return { result: renderCheckoutSession(ctx, outcome.result, call.params), events: outcome.events };
    },
  },
  {
    endpoint: "payment_intents.create",
    method: "post",
    path: "/payment_intents",
    handle: (ctx, call) => {
      const outcome = createPaymentIntent(ctx, withoutExpand(call.params), call.origin, call.decline);
      return "error" in outcome
        ? { result: null, events: outcome.events, error: outcome.error }
        : rendered(ctx, call, outcome);
    },
  },
  {
    endpoint: "payment_intents.retrieve",
    method: "get",
    path: "/payment_intents/:id",
    handle: (ctx, call) =>
      read(renderPaymentIntent(ctx, retrievePaymentIntent(ctx, idOf(call)), call.params)),
  },
  {
    endpoint: "payment_intents.capture",
    method: "post",
    path: "/payment_intents/:id/capture",
    handle: (ctx, call) =>
      rendered(ctx, call, capturePaymentIntent(ctx, idOf(call), withoutExpand(call.params), call.origin)),
  },
  {
    endpoint: "payment_intents.cancel",
    method: "post",
    path: "/payment_intents/:id/cancel",
    handle: (ctx, call) =>
      rendered(ctx, call, cancelPaymentIntent(ctx, idOf(call), withoutExpand(call.params), call.origin)),
  },
  {
    endpoint: "refunds.create",
    method: "post",
    path: "/refunds",
    handle: (ctx, call) => createRefund(ctx, call.params, call.origin),
  },
  {
    endpoint: "refunds.retrieve",
    method: "get",
    path: "/refunds/:id",
    handle: (ctx, call) => read(retrieveRefund(ctx, idOf(call))),
  },
  {
    endpoint: "refunds.list",
    method: "get",
    path: "/refunds",
    handle: (ctx, call) => read(listRefunds(ctx, call.params)),
  },
  {
    endpoint: "balance_transactions.list",
    method: "get",
    path: "/balance_transactions",
    handle: (ctx, call) => read(listBalanceTransactions(ctx, call.params)),
  },
  {
    endpoint: "disputes.list",
    method: "get",
    path: "/disputes",
    handle: (ctx, call) => read(listDisputes(ctx, call.params)),
  },
  {
    endpoint: "disputes.retrieve",
    method: "get",
    path: "/disputes/:id",
    handle: (ctx, call) => read(retrieveDispute(ctx, idOf(call))),
  },
  {
    endpoint: "coupons.create",
    method: "post",
    path: "/coupons",
    handle: (ctx, call) => read(createCoupon(ctx, withoutExpand(call.params))),
  },
  {
    endpoint: "coupons.retrieve",
    method: "get",
    path: "/coupons/:id",
    handle: (ctx, call) => read(retrieveCoupon(ctx, idOf(call))),
  },
  {
    endpoint: "promotion_codes.create",
    method: "post",
    path: "/promotion_codes",
    handle: (ctx, call) => read(createPromotionCode(ctx, withoutExpand(call.params))),
  },
  {
    endpoint: "promotion_codes.retrieve",
    method: "get",
    path: "/promotion_codes/:id",
    handle: (ctx, call) => read(retrievePromotionCode(ctx, idOf(call))),
  },
  {
    endpoint: "promotion_codes.list",
    method: "get",
    path: "/promotion_codes",
    handle: (ctx, call) => read(listPromotionCodes(ctx, call.params)),
  },
  {
    endpoint: "shipping_rates.create",
    method: "post",
    path: "/shipping_rates",
    handle: (ctx, call) => read(createShippingRate(ctx, withoutExpand(call.params))),
  },
  {
    endpoint: "shipping_rates.retrieve",
    method: "get",
    path: "/shipping_rates/:id",
    handle: (ctx, call) => read(retrieveShippingRate(ctx, idOf(call))),
  },
  {
    endpoint: "events.list",
    method: "get",
    path: "/events",
    handle: (ctx, call) => read(listEvents(ctx, call.params)),
  },
  {
    endpoint: "events.retrieve",
    method: "get",
    path: "/events/:id",
    handle: (ctx, call) => read(retrieveEvent(ctx, idOf(call))),
  },
];

export interface ApiRouterDeps {
  ctx: SandboxContext;
  failures: FailureInjector;
  idempotency: IdempotencyKeys;
  requestLog: RequestLogEntry[];
  /** Events caused by API calls go to the webhook endpoint after the response, like Stripe's. */
  onEvents(events: Stripe.Event[]): void;
  /** Responses held open by a `hang` failure, so close() can drop them. */
  hanging: Set<Response>;
}

function checkApiKey(req: Request): void {
  const authorization = req.get("authorization");
  if (!authorization) throw stripeErrors.missingApiKey();
  const key = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? "";
  if (!/^(sk|rk)_/.test(key)) throw stripeErrors.invalidApiKey();
}

function paramsOf(req: Request): Params {
  if (req.method === "GET") {
    const query = req.originalUrl.split("?")[1] ?? "";
    return parseStripeParams(query);
  }
  return parseStripeParams(typeof req.body === "string" ? req.body : "");
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function createApiRouter(deps: ApiRouterDeps): Router {
  const router = express.Router();
  router.use(express.text({ type: () => true, limit: "1mb" }));

  for (const route of routes) {
    router[route.method](route.path, async (req: Request, res: Response) => {
      const requestId = stripeId("req");
      const pathId = typeof req.params.id === "string" ? req.params.id : undefined;
      const idempotencyKey = route.method === "post" ? (req.get("idempotency-key") ?? null) : null;
      res.set({
        "request-id": requestId,
        "stripe-version": req.get("stripe-version") ?? Stripe.API_VERSION,
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
      });
      const entry: RequestLogEntry = {
        endpoint: route.endpoint,
        method: req.method,
        path: req.path,
        params: {},
        idempotencyKey,
        status: 0,
        replayed: false,
      };
      deps.requestLog.push(entry);
      // A long-running `npm start` must not grow without bound; tests look at recent calls.
      if (deps.requestLog.length > maxLogEntries)
        deps.requestLog.splice(0, deps.requestLog.length - maxLogEntries);

      const send = (status: number, body: unknown): void => {
        entry.status = status;
        if (!res.writableEnded && !res.destroyed) res.status(status).json(body);
      };
      const hang = async ({ ms, until }: { ms?: number; until?: Promise<unknown> }): Promise<boolean> => {
        if (until) {
          await until.catch(() => undefined);
          return false;
        }
        if (ms === undefined) {
          deps.hanging.add(res);
          res.on("close", () => deps.hanging.delete(res));
          return true;
        }
        await sleep(ms);
        return false;
      };

      try {
        checkApiKey(req);
        entry.params = paramsOf(req);
        // Like Stripe: a parameter the endpoint does not accept fails validation before anything
        // executes, so nothing is saved under the idempotency key.
        validateParams(route.endpoint, entry.params);
        const failure = deps.failures.take(route.endpoint);
        if (failure) entry.injected = failure.kind;
        if (failure?.kind === "server_error") throw stripeErrors.apiError();
        if (failure?.kind === "rate_limited") throw stripeErrors.rateLimited();
        if (failure?.kind === "hang" && !failure.afterProcessing && (await hang(failure))) return;

        if (idempotencyKey) {
          const saved = deps.idempotency.lookup(idempotencyKey, `${req.method} ${route.path}`, entry.params);
          if (saved) {
            entry.replayed = true;
            res.set("idempotent-replayed", "true");
            send(saved.status, saved.body);
            return;
          }
        }

        let status = 200;
        let body: unknown;
        let events: Stripe.Event[] = [];
        try {
          const inside = declinedInside.includes(route.endpoint);
          if ((failure?.kind === "decline" && !inside) || failure?.kind === "capture_failure") {
            const paymentIntent = pathId?.startsWith("pi_")
              ? deps.ctx.store.data.paymentIntents[pathId]
              : undefined;
            throw failure.kind === "decline"
              ? stripeErrors.declined(failure.code ?? "card_declined", paymentIntent)
              : stripeErrors.captureFailed(failure.code, paymentIntent);
          }
          const outcome = route.handle(deps.ctx, {
            id: pathId,
            params: entry.params,
            origin: { requestId, idempotencyKey },
            ...(failure?.kind === "decline" && inside ? { decline: failure.code ?? "card_declined" } : {}),
          });
          events = outcome.events;
          if (outcome.error) {
            status = outcome.error.status;
            body = { error: outcome.error.body };
          } else body = outcome.result;
        } catch (error) {
          if (!(error instanceof StripeApiError)) throw error;
          status = error.status;
          body = { error: error.body };
        }
        if (idempotencyKey)
          deps.idempotency.save(idempotencyKey, `${req.method} ${route.path}`, entry.params, status, body);
        if (route.method === "post") deps.ctx.store.persist();
        deps.onEvents(events);

        if (failure?.kind === "hang" && failure.afterProcessing && (await hang(failure))) return;
        send(status, body);
      } catch (error) {
        if (error instanceof StripeApiError) send(error.status, { error: error.body });
        else
          send(500, {
            error: { type: "api_error", message: error instanceof Error ? error.message : String(error) },
          });
      }
    });
  }

  router.use((req: Request, res: Response) => {
    res.status(404).json({ error: stripeErrors.unknownRoute(req.method, req.originalUrl).body });
  });
  // Body-parser failures (oversized or unreadable bodies) answer in Stripe's envelope too.
  router.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: number }).status ?? 500;
    res.status(status).json({
      error: {
        type: status < 500 ? "invalid_request_error" : "api_error",
        message: error instanceof Error ? error.message : String(error),
      },
    });
  });
  return router;
}
