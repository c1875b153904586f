import { Router } from "express";
import { z } from "zod";
import type { Database } from "../db/client";
import { AppError } from "../errors";
import { requireBearerToken } from "../http/bearer-auth";
import { recordCancelRequest, registerConsoleApi, type ConsoleApiDeps } from "./admin-console-api";
import { requestOrderCancellation, type CancelOrderDeps } from "./cancel-order";
import { findOrderDetails } from "./order-details";
import type { Refunds } from "./refund-order";
import { redriveOrder, type OrderRedrive } from "./redrive-order";

const orderId = z.uuid();
const cancelBody = z.object({ reason: z.string().max(500).optional() }).strict();
const refundBody = z
  .object({
    amount: z.number().int().positive().max(100_000_000).optional(),
    reason: z.string().max(500).optional(),
  })
  .strict();

function parseOrderId(value: unknown): string {
  const parsed = orderId.safeParse(value);
  if (!parsed.success) throw new AppError("order_not_found", `Order ${String(value)} does not exist`);
  return parsed.data;
}

export function orderAdminRoutes(
  deps: CancelOrderDeps &
    ConsoleApiDeps & { db: Database; adminToken: string; refunds?: Refunds; redrive: OrderRedrive },
): Router {
  const router = Router();
  router.use(requireBearerToken(deps.adminToken));
  registerConsoleApi(router, deps);

  router.get("/:id", async (req, res) => {
    const id = parseOrderId(req.params.id);
    const details = await findOrderDetails(deps.db, id);
    if (!details) throw new AppError("order_not_found", `Order ${id} does not exist`);
    res.json(details);
  });

  router.post("/:id/cancel", async (req, res) => {
    const id = parseOrderId(req.params.id);
    const body = cancelBody.safeParse(req.body ?? {});
    if (!body.success)
      throw new AppError("validation_failed", body.error.issues.map((i) => i.message).join("; "));
    const accepted = await requestOrderCancellation(deps, id, body.data.reason);
    await recordCancelRequest(deps.db, id, body.data.reason, "admin-api");
    res.status(202).json(accepted);
  });

  router.post("/:id/refund", async (req, res) => {
    const id = parseOrderId(req.params.id);
    if (!deps.refunds) throw new AppError("route_not_found", "Refunds are not configured");
    const body = refundBody.safeParse(req.body ?? {});
    if (!body.success)
      throw new AppError(
        "validation_failed",
        body.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
      );
    res.status(201).json(await deps.refunds.refund(id, body.data));
  });

  router.post("/:id/redrive", async (req, res) => {
    const id = parseOrderId(req.params.id);
    const orderExists = async (orderId: string) =>
      (await deps.db.order.count({ where: { id: orderId } })) > 0;
    res.status(202).json(await redriveOrder({ ...deps, orderExists }, id));
  });

  return router;
}
