import { Router } from "express";
import { z } from "zod";
import { AppError } from "../errors";
import { minorUnitsSchema } from "../shared/money";
import { requireBearerToken } from "../http/bearer-auth";
import { opsHoldReasons } from "./hold-order";
import type { OrderActions } from "./order-actions";
import type { OrderQueries } from "./order-queries";

const uuid = z.uuid();
const cancelBody = z.object({ reason: z.string().max(500).optional() }).strict();
const refundBody = z
  .object({
    amount: minorUnitsSchema({ min: 1, max: 100_000_000 })
      .optional()
      .meta({ description: "Minor units (cents); unset: all that is left to refund" }),
    reason: z.string().max(500).optional(),
  })
  .strict();

const holdBody = z.object({ reason: z.enum(opsHoldReasons), note: z.string().max(500).optional() }).strict();

function idParam(value: unknown, code: "order_not_found" | "not_found", what: string): string {
  const parsed = uuid.safeParse(value);
  if (!parsed.success) throw new AppError(code, `${what} ${String(value)} does not exist`);
  return parsed.data;
}
const orderIdParam = (value: unknown) => idParam(value, "order_not_found", "Order");

/**
 * The admin API, /api/orders: a thin door that checks the request and calls the order's query
 * functions and use cases, the same ones the ops console calls (src/pages/ops).
 */
export function orderAdminRoutes(deps: { adminToken: string; actions: OrderActions; queries: OrderQueries }) {
  const { actions, queries } = deps;
  const router = Router();
  router.use(requireBearerToken(deps.adminToken));

  router.get("/", async (req, res) => {
    res.json(await queries.search(req.query as Record<string, unknown>));
  });

  router.get("/:id", async (req, res) => {
    const id = orderIdParam(req.params.id);
    const details = await queries.details(id);
    if (!details) throw new AppError("order_not_found", `Order ${id} does not exist`);
    res.json(details);
  });

  router.post("/:id/cancel", async (req, res) => {
    const orderId = orderIdParam(req.params.id);
    const body = cancelBody.safeParse(req.body ?? {});
    if (!body.success)
      throw new AppError("validation_failed", body.error.issues.map((i) => i.message).join("; "));
    res.status(202).json(await actions.cancel({ orderId, ...body.data, by: "admin-api" }));
  });

  router.post("/:id/refund", async (req, res) => {
    const orderId = orderIdParam(req.params.id);
    const body = refundBody.safeParse(req.body ?? {});
    if (!body.success)
      throw new AppError(
        "validation_failed",
        body.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
      );
    res.status(201).json(await actions.refund({ orderId, ...body.data, by: "admin-api" }));
  });

  router.post("/:id/redrive", async (req, res) => {
    const orderId = orderIdParam(req.params.id);
    res.status(202).json(await actions.redrive({ orderId, by: "admin-api" }));
  });

  router.post("/:id/hold", async (req, res) => {
    const orderId = orderIdParam(req.params.id);
    const body = holdBody.safeParse(req.body ?? {});
    if (!body.success)
      throw new AppError(
        "validation_failed",
        body.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
      );
    res.status(200).json(await actions.hold({ orderId, ...body.data, by: "admin-api" }));
  });

  router.post("/:id/release-hold", async (req, res) => {
    const orderId = orderIdParam(req.params.id);
    res.status(200).json(await actions.releaseHold({ orderId, by: "admin-api" }));
  });

  router.post("/:id/shipments/:shipmentId/reship", async (req, res) => {
    const orderId = orderIdParam(req.params.id);
    const parsed = uuid.safeParse(req.params.shipmentId);
    if (!parsed.success)
      throw new AppError(
        "shipment_not_found",
        `Order ${orderId} has no shipment ${String(req.params.shipmentId)}`,
      );
    const result = await actions.reship({ orderId, shipmentId: parsed.data, by: "admin-api" });
    res.status(result.repeated ? 200 : 201).json(result);
  });

  router.post("/:id/emails/:emailId/resend", async (req, res) => {
    const orderId = orderIdParam(req.params.id);
    const emailId = idParam(req.params.emailId, "not_found", "E-mail");
    res.status(201).json(await actions.resendEmail({ orderId, emailId, by: "admin-api" }));
  });

  return router;
}
