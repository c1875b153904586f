import { Router } from "express";
import { z } from "zod";
import { AppError } from "../errors";
import { requireBearerToken } from "../http/bearer-auth";
import { createReturnBody, receiveReturnBody, returnDecisionBody } from "./return-schemas";
import type { ReturnActions } from "./returns";

const uuid = z.uuid();

function idParam(value: unknown, code: "order_not_found" | "return_not_found", what: string): string {
  const parsed = uuid.safeParse(value);
  if (!parsed.success) throw new AppError(code, `${what} ${String(value)} does not exist`);
  return parsed.data;
}

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) {
    throw new AppError(
      "validation_failed",
      parsed.error.issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`).join("; "),
    );
  }
  return parsed.data;
}

/**
 * The returns' admin door, mounted at /api: `POST|GET /api/orders/:id/returns` and
 * `POST /api/returns/:id/approve|reject|receive|close`, each a few lines around the use case the
 * console calls too (src/returns/returns.ts).
 */
export function returnAdminRoutes(deps: {
  adminToken: string;
  returns: ReturnActions;
  orderExists(id: string): Promise<boolean>;
}) {
  const { returns } = deps;
  const router = Router();
  const auth = requireBearerToken(deps.adminToken);
  router.use(["/orders/:id/returns", "/returns"], auth);

  router.post("/orders/:id/returns", async (req, res) => {
    const orderId = idParam(req.params.id, "order_not_found", "Order");
    const body = parse(createReturnBody, req.body);
    res.status(201).json(await returns.request({ orderId, ...body, by: "admin-api" }));
  });

  router.get("/orders/:id/returns", async (req, res) => {
    const orderId = idParam(req.params.id, "order_not_found", "Order");
    if (!(await deps.orderExists(orderId)))
      throw new AppError("order_not_found", `Order ${orderId} does not exist`);
    res.json({ returns: await returns.list(orderId) });
  });

  router.get("/returns/:id", async (req, res) => {
    res.json(await returns.get(idParam(req.params.id, "return_not_found", "Return")));
  });

  for (const action of ["approve", "reject", "close"] as const) {
    router.post(`/returns/:id/${action}`, async (req, res) => {
      const returnId = idParam(req.params.id, "return_not_found", "Return");
      const body = parse(returnDecisionBody, req.body);
      res.json(await returns[action]({ returnId, ...body, by: "admin-api" }));
    });
  }

  router.post("/returns/:id/receive", async (req, res) => {
    const returnId = idParam(req.params.id, "return_not_found", "Return");
    const body = parse(receiveReturnBody, req.body);
    res.json(await returns.receive({ returnId, ...body, by: "admin-api" }));
  });

  return router;
}
