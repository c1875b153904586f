import express, { Router } from "express";
import { actionRoutes } from "./actions";
import type { OpsConsoleDeps } from "./deps";
import { emailPage } from "./email-page";
import { loginRoutes, logoutRoute } from "./login";
import { orderPage } from "./order-page";
import { ordersPage } from "./orders-page";
import { productPages } from "./products-page";
import { reconciliationPage } from "./reconciliation-page";
import { returnsPage } from "./returns-page";
import { runPage } from "./run-page";
import { webhooksPage } from "./webhooks-page";

export type { OpsConsoleDeps } from "./deps";

/**
 * The ops console, one file per page: login, the order list, an order, an e-mail, the actions'
 * confirm pages and posts, a run. Every page after the login needs a session (and a CSRF token on
 * POST); each renders and calls the order's query functions and use cases, never the database.
 */
export function opsConsole(deps: OpsConsoleDeps): Router {
  const router = Router();
  router.use(loginRoutes(deps));
  // A pasted catalog is larger than any other form; read first, the 10kb parser then skips it.
  router.use("/ops/products/import", express.urlencoded({ extended: false, limit: "2mb" }));
  router.use("/ops", express.urlencoded({ extended: false, limit: "10kb" }), deps.sessions.require);
  router.use("/ops", alertBanner(deps));
  router.use(logoutRoute(deps));
  router.use(ordersPage(deps));
  router.use(orderPage(deps));
  router.use(emailPage(deps));
  router.use(actionRoutes(deps));
  router.use(runPage(deps));
  if (deps.catalog) router.use(productPages(deps, deps.catalog));
  router.use(reconciliationPage(deps));
  if (deps.returns) router.use(returnsPage(deps, deps.returns));
  if (deps.webhooks) router.use(webhooksPage(deps, deps.webhooks));
  return router;
}

/**
 * Slack is where ops hear of a failed order; when alerts have failed to reach it for long, the
 * console is the other place ops look, so every page says so (the readiness probe stays up: the
 * service itself is fine, and restarting it would not help).
 */
function alertBanner(deps: OpsConsoleDeps): express.RequestHandler {
  return async (_req, res, next) => {
    if (deps.alertBacklog === undefined) return next();
    try {
      const backlog = await deps.alertBacklog();
      const failingSince = backlog.oldestFailingAt;
      if (
        failingSince !== undefined &&
        Date.now() - failingSince.getTime() >= (deps.alertBannerAfterMs ?? 10 * 60_000)
      ) {
        res.locals.banner =
          `${backlog.undelivered} ops alert${backlog.undelivered === 1 ? "" : "s"} could not be delivered to ` +
          `Slack since ${failingSince.toISOString()}: they are kept and retried. Check SLACK_WEBHOOK_URL ` +
          `and Slack's status; meanwhile look at Needs attention.`;
      }
    } catch (error) {
      deps.logger.warn({ err: error }, "could not read the ops alerts backlog");
    }
    next();
  };
}
