import { Router } from "express";
import type { ReadinessProbe } from "./readiness";

export function healthRoutes(readiness: ReadinessProbe): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const report = await readiness();
    if (report.ready) {
      res.json({ status: "ready", checks: report.checks });
      return;
    }
    res.status(503).json({
      error: { code: "not_ready", message: "The service is not ready to take traffic" },
      checks: report.checks,
    });
  });
  return router;
}
