import type { Router } from "express";
import { z } from "zod";
import type { Database } from "../db/client";
import { AppError } from "../errors";
import { parseOrderSearch, searchOrders } from "./order-search";

export interface ConsoleApiDeps {
  db: Database;
  /** POST /api/orders/:id/emails/:emailId/resend (src/notifications/resend-email.ts). */
  resendEmail?: (orderId: string, emailId: string, by: string) => Promise<unknown>;
}

const uuid = z.uuid();

function idParam(value: unknown, code: "order_not_found" | "not_found", what: string): string {
  const parsed = uuid.safeParse(value);
  if (!parsed.success) throw new AppError(code, `${what} ${String(value)} does not exist`);
  return parsed.data;
}

/** The admin API the ops console also stands on: order search and e-mail re-send. */
export function registerConsoleApi(router: Router, deps: ConsoleApiDeps): void {
  router.get("/", async (req, res) => {
    res.json(await searchOrders(deps.db, parseOrderSearch(req.query as Record<string, unknown>)));
  });

  const resend = deps.resendEmail;
  if (resend) {
    router.post("/:id/emails/:emailId/resend", async (req, res) => {
      const orderId = idParam(req.params.id, "order_not_found", "Order");
      const emailId = idParam(req.params.emailId, "not_found", "E-mail");
      res.status(201).json(await resend(orderId, emailId, "admin-api"));
    });
  }
}

/** Cancel's reason on the timeline, with who asked (the workflow's own entry says how it ended). */
export async function recordCancelRequest(
  db: Database,
  orderId: string,
  reason: string | undefined,
  by: string,
) {
  await db.orderTimelineEntry.create({
    data: { orderId, kind: "cancel-requested", detail: { ...(reason ? { reason } : {}), by } },
  });
}
