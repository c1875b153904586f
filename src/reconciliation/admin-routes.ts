import { Router } from "express";
import { z } from "zod";
import { AppError } from "../errors";
import { requireBearerToken } from "../http/bearer-auth";
import type { Reconciliation } from "./reconcile";

// No date: today in SHOP_TIME_ZONE (the day so far; a later run replaces its report).
const runBody = z.object({ date: z.string().optional() }).strict();
const listQuery = z.object({ date: z.string().optional() }).strict();

const problems = (error: z.ZodError) =>
  error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; ");

/**
 * /api/reconciliation: run a day's reconciliation and read its report, the same function the
 * daily cron, the ops console and `npm run reconcile` call.
 */
export function reconciliationAdminRoutes(deps: { adminToken: string; reconciliation: Reconciliation }) {
  const { reconciliation } = deps;
  const router = Router();
  router.use(requireBearerToken(deps.adminToken));

  router.post("/runs", async (req, res) => {
    const body = runBody.safeParse(req.body ?? {});
    if (!body.success) throw new AppError("validation_failed", problems(body.error));
    res.status(201).json(
      await reconciliation.run({
        ...(body.data.date !== undefined ? { date: body.data.date } : {}),
        by: "admin-api",
      }),
    );
  });

  router.get("/runs", async (req, res) => {
    const query = listQuery.safeParse(req.query);
    if (!query.success) throw new AppError("validation_failed", problems(query.error));
    res.json({ runs: await reconciliation.list(query.data) });
  });

  router.get("/runs/:id", async (req, res) => {
    res.json(await reconciliation.find(req.params.id));
  });

  return router;
}
