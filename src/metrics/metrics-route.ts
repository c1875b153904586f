import { Router } from "express";
import { requireBearerToken } from "../http/bearer-auth";
import type { Metrics } from "./metrics";

/**
 * GET /metrics in Prometheus' text format. With a token (METRICS_TOKEN) the scraper must send it
 * as a bearer token; without one the route is open, for a port only the scraper can reach.
 */
export function metricsRoute(metrics: Metrics, options: { token?: string } = {}): Router {
  const router = Router();
  const guard = options.token === undefined ? [] : [requireBearerToken(options.token)];
  router.get("/metrics", ...guard, async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  return router;
}
