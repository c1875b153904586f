import type { ServerResponse } from "node:http";
import express, { type Express, type RequestHandler, type Router } from "express";
import { AppError } from "./errors";
import type { Logger } from "./logger";
import type { ReadinessProbe } from "./health/readiness";
import { healthRoutes } from "./health/routes";
import { errorHandler, notFound } from "./http/errors";
import { requestLogging } from "./http/request-logging";
import { refuseNulInJson, refuseNulInUrl } from "./http/refuse-nul";
import { securityHeaders } from "./http/security-headers";
import { openApiRoute } from "./openapi/document";
import { answerBeforeExpress } from "./shims/express-entry";
import { stripeWebhookPath, type StripeWebhookEndpoint } from "./orders/intake/stripe-webhook-route";

/** Everything the HTTP layer needs, built by src/wiring.ts (or by a test). */
export interface AppDependencies {
  logger: Logger;
  readiness: ReadinessProbe;
  /** POST /api/carrier/webhook (src/shipping/carrier-webhook.ts); reads its body raw. */
  carrierWebhook?: RequestHandler;
  /** Inngest's serve() behind src/http/inngest-endpoint.ts (it parses its own body), and its path. */
  inngestServe?: { path: string; handler: RequestHandler };
  /** /api/orders: the admin view and cancellation. */
  orderAdmin?: Router;
  /** /api/orders/:id/returns and /api/returns: returns after delivery (src/returns/admin-routes.ts). */
  returnsAdmin?: Router;
  /** /api/reconciliation: the daily reconciliation's runs (src/reconciliation/admin-routes.ts). */
  reconciliationAdmin?: Router;
  /** /api/admin/webhook-endpoints and /api/admin/webhook-deliveries (src/webhooks/admin-routes.ts). */
  webhooksAdmin?: Router;
  /** Runs before orderAdmin: a per-client limit on failed admin requests (src/http/rate-limit.ts). */
  adminRateLimit?: RequestHandler;
  /** Express "trust proxy" (TRUST_PROXY): which proxies' X-Forwarded-For names the client. */
  trustProxy?: number | string | false;
  /** GET /metrics (src/metrics/metrics-route.ts). */
  metricsRoute?: Router;
  /** POST /api/stripe/webhook (src/orders/order-intake.ts); reads its body raw. */
  stripeWebhook?: StripeWebhookEndpoint;
  /** GET /api/products and POST /api/checkout (src/orders/order-intake.ts). */
  checkout?: Router;
  /** /api/admin/products: the catalog and its stock ledger (src/inventory/catalog-routes.ts). */
  catalogAdmin?: Router;
  /** HTML pages: customer pages, /ops, /dev/outbox (src/pages). */
  pages?: Router;
  /** NODE_ENV=production: Strict-Transport-Security on (src/http/security-headers.ts). */
  production?: boolean;
  /** The shop logo's origin (SHOP_LOGO_URL), which pages may load an image from. */
  logoOrigin?: string;
}

/**
 * A body express.json() did not parse (wrong or missing Content-Type) would reach the routes as
 * `undefined` and fail validation with "expected object, received undefined"; say what to send.
 */
const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody =
    req.headers["transfer-encoding"] !== undefined ||
    (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");
  if (req.body === undefined && hasBody) {
    const type = req.headers["content-type"] ?? "no Content-Type";
    next(
      new AppError(
        "unsupported_media_type",
        `The body was sent as ${type}; send JSON with the header Content-Type: application/json`,
      ),
    );
    return;
  }
  next();
};

/** Headers on every response, including the Stripe webhook's answers served before express. */
function setCommonHeaders(res: ServerResponse): void {
  // No response is to be sniffed into another type than the one it declares.
  res.setHeader("X-Content-Type-Options", "nosniff");
}

/**
 * Builds the Express app from its dependencies. It never listens: src/server.ts does.
 *
 * One exception to "every request goes through express": POST /api/stripe/webhook, exactly that
 * URL, is answered before express sets the request up (see serveStripeWebhookFirst). Middleware
 * added below with app.use() does not run for it: what a delivery needs, it does itself.
 */
export function buildApp(deps: AppDependencies): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", deps.trustProxy ?? false);
  if (deps.stripeWebhook) serveStripeWebhookFirst(app, deps.stripeWebhook);
  app.use((_req, res, next) => {
    setCommonHeaders(res);
    next();
  });

  // Routes that verify signatures over the raw body are mounted before any JSON parser. The
  // Stripe webhook, the service's hottest route, also comes before the access log: it logs its
  // own rejections and failures, the intake logs what a delivery changed, and metrics count every
  // delivery, so a per-request child logger and access line would only add cost
  // (docs/decisions/0009-stripe-webhook-served-before-express.md).
  if (deps.stripeWebhook) app.use(deps.stripeWebhook.router);

  // What a browser is to enforce; Stripe, the webhook's only client, is not one.
  app.use(
    securityHeaders({
      production: deps.production ?? false,
      ...(deps.logoOrigin ? { imageOrigins: [deps.logoOrigin] } : {}),
    }),
  );

  app.use(requestLogging(deps.logger));
  // Before any route reads the URL; after the access log, which records the refusal at warn.
  app.use(refuseNulInUrl);
  app.use(healthRoutes(deps.readiness));
  // Browsers ask every site for /favicon.ico. The pages name no icon: "nothing here" without a 404
  // (which was logged at warn for every page a customer opened), asked again at most once a day.
  app.get("/favicon.ico", (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=86400");
    res.status(204).end();
  });
  app.get("/openapi.json", openApiRoute);
  if (deps.metricsRoute) app.use(deps.metricsRoute);

  if (deps.carrierWebhook) app.use(deps.carrierWebhook);

  // The handler parses its own body (src/http/inngest-endpoint.ts): generous only when signed.
  if (deps.inngestServe) app.use(deps.inngestServe.path, deps.inngestServe.handler);

  // Order details are personal data: no cache (browser or proxy) keeps an admin response.
  if (deps.orderAdmin) app.use("/api/orders", noStore);
  // Limited before the body is parsed: a flood of bad tokens costs as little as possible.
  if (deps.orderAdmin && deps.adminRateLimit) app.use("/api/orders", deps.adminRateLimit);
  if (deps.catalogAdmin || deps.webhooksAdmin) app.use("/api/admin", noStore);
  if ((deps.catalogAdmin || deps.webhooksAdmin) && deps.adminRateLimit)
    app.use("/api/admin", deps.adminRateLimit);
  if (deps.returnsAdmin) app.use("/api/returns", noStore);
  if (deps.returnsAdmin && deps.adminRateLimit) app.use("/api/returns", deps.adminRateLimit);
  if (deps.reconciliationAdmin) app.use("/api/reconciliation", noStore);
  if (deps.reconciliationAdmin && deps.adminRateLimit) app.use("/api/reconciliation", deps.adminRateLimit);

  app.use(express.json({ limit: "100kb", reviver: refuseNulInJson }));
  app.use("/api", requireJsonBody);

  // Before the order routes: /api/orders/:id/returns is the returns' door.
  if (deps.returnsAdmin) app.use("/api", deps.returnsAdmin);
  if (deps.orderAdmin) app.use("/api/orders", deps.orderAdmin);
  if (deps.catalogAdmin) app.use("/api/admin/products", deps.catalogAdmin);
  if (deps.webhooksAdmin) app.use("/api/admin", deps.webhooksAdmin);
  if (deps.reconciliationAdmin) app.use("/api/reconciliation", deps.reconciliationAdmin);
  if (deps.checkout) app.use(deps.checkout);
  if (deps.pages) app.use(deps.pages);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}

/**
 * Answers POST /api/stripe/webhook before express (src/shims/express-entry.ts): only the exact
 * URL; anything else, query strings and trailing slashes included, goes to express, which has the
 * same endpoint as a route.
 */
function serveStripeWebhookFirst(app: Express, endpoint: StripeWebhookEndpoint): void {
  answerBeforeExpress(app, {
    method: "POST",
    url: stripeWebhookPath,
    serve: (req, res, fail) => {
      setCommonHeaders(res);
      endpoint.serve(req, res, fail);
    },
  });
}

const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader("Cache-Control", "no-store");
  next();
};
