import { Router } from "express";
import { z } from "zod";
import { AppError } from "../errors";
import { requireBearerToken } from "../http/bearer-auth";
import type { WebhookEndpoints } from "./endpoints";

const deliveriesQuery = z.object({ limit: z.coerce.number().int().min(1).max(200).optional() }).strict();

/**
 * /api/admin/webhook-endpoints and /api/admin/webhook-deliveries (docs/webhooks.md): the shop's
 * webhook endpoints, their delivery log and "send again". Mounted under /api/admin.
 */
export function webhookAdminRoutes(deps: { adminToken: string; endpoints: WebhookEndpoints }) {
  const { endpoints } = deps;
  const router = Router();
  router.use(["/webhook-endpoints", "/webhook-deliveries"], requireBearerToken(deps.adminToken));

  router.post("/webhook-endpoints", async (req, res) => {
    res.status(201).json(await endpoints.create(req.body));
  });
  router.get("/webhook-endpoints", async (_req, res) => {
    res.json({ endpoints: await endpoints.list() });
  });
  router.get("/webhook-endpoints/:id", async (req, res) => {
    res.json(await endpoints.get(req.params.id));
  });
  router.patch("/webhook-endpoints/:id", async (req, res) => {
    res.json(await endpoints.update(req.params.id, req.body));
  });
  router.delete("/webhook-endpoints/:id", async (req, res) => {
    await endpoints.remove(req.params.id);
    res.status(204).end();
  });
  router.post("/webhook-endpoints/:id/rotate-secret", async (req, res) => {
    res.json(await endpoints.rotateSecret(req.params.id, req.body));
  });
  router.get("/webhook-endpoints/:id/deliveries", async (req, res) => {
    const query = deliveriesQuery.safeParse(req.query);
    if (!query.success)
      throw new AppError("validation_failed", "limit: must be a whole number from 1 to 200");
    res.json({ deliveries: await endpoints.deliveries(req.params.id, query.data) });
  });
  router.get("/webhook-deliveries/:id", async (req, res) => {
    res.json(await endpoints.delivery(req.params.id));
  });
  router.post("/webhook-deliveries/:id/send-again", async (req, res) => {
    res.status(202).json(await endpoints.sendAgain(req.params.id));
  });
  return router;
}
