import express, { type Express, type RequestHandler, type Router } from "express";
import type { Logger } from "./logger";
import type { ReadinessProbe } from "./health/readiness";
import { healthRoutes } from "./health/routes";
import { errorHandler, notFound } from "./http/errors";
import { requestLogging } from "./http/request-logging";

/** Everything the HTTP layer needs, built by src/wiring.ts (or by a test). */
export interface AppDependencies {
  logger: Logger;
  readiness: ReadinessProbe;
  /** POST /api/carrier/webhook (src/shipping/carrier-webhook.ts); reads its body raw. */
  carrierWebhook?: RequestHandler;
  /** Inngest's serve() handler and where to mount it. */
  inngestServe?: { path: string; handler: RequestHandler };
  /** /api/orders: the admin view and cancellation. */
  orderAdmin?: Router;
}

/** Builds the Express app from its dependencies. It never listens: src/server.ts does. */
export function buildApp(deps: AppDependencies): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", false);

  app.use(requestLogging(deps.logger));
  app.use(healthRoutes(deps.readiness));

  // Routes that verify signatures over the raw body are mounted before any JSON parser.
  if (deps.carrierWebhook) app.use(deps.carrierWebhook);

  // Memoised step results travel in every call from Inngest, so its body limit is generous.
  if (deps.inngestServe) {
    app.use(deps.inngestServe.path, express.json({ limit: "16mb" }), deps.inngestServe.handler);
  }

  app.use(express.json({ limit: "100kb" }));

  if (deps.orderAdmin) app.use("/api/orders", deps.orderAdmin);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
