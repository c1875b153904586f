import express, { Router } from "express";
import { actionRoutes } from "./actions";
import type { OpsConsoleDeps } from "./deps";
import { emailPage } from "./email-page";
import { loginRoutes, logoutRoute } from "./login";
import { orderPage } from "./order-page";
import { ordersPage } from "./orders-page";
import { reconciliationPage } from "./reconciliation-page";
import { runPage } from "./run-page";

export type { OpsConsoleDeps } from "./deps";

/**
 * The ops console, one file per page: login, the order list, an order, an e-mail, the actions'
 * confirm pages and posts, a run. Every page after the login needs a session (and a CSRF token on
 * POST); each renders and calls the order's query functions and use cases, never the database.
 */
export function opsConsole(deps: OpsConsoleDeps): Router {
  const router = Router();
  router.use(loginRoutes(deps));
  router.use("/ops", express.urlencoded({ extended: false, limit: "10kb" }), deps.sessions.require);
  router.use(logoutRoute(deps));
  router.use(ordersPage(deps));
  router.use(orderPage(deps));
  router.use(emailPage(deps));
  router.use(actionRoutes(deps));
  router.use(runPage(deps));
  router.use(reconciliationPage(deps));
  return router;
}
