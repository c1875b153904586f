import express, { type Router } from "express";
import type { SandboxContext } from "./context";
import { OutcomeNotPossible, type CompletionOutcome, retrieveCheckoutSession } from "./checkout-sessions";
import type { SandboxControl } from "./control";
import { StripeApiError } from "./errors";
import { parseStripeParams } from "./form";

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );

const outcomes: CompletionOutcome[] = ["paid", "authorized", "declined", "async_pending"];

/**
 * The "hosted Checkout page" a session's `url` points at, so a person trying the service offline
 * can pay from a browser. It only calls the same control operations the tests use.
 */
export function createPayPage(deps: { ctx: SandboxContext; control: SandboxControl }): Router {
  const router = express.Router();

  router.get("/:id", (req, res) => {
    let session;
    try {
      session = retrieveCheckoutSession(deps.ctx, req.params.id);
    } catch {
      res.status(404).type("html").send("<h1>No such Checkout Session</h1>");
      return;
    }
    const items = (deps.ctx.store.data.lineItems[session.id] ?? [])
      .map(
        (item) =>
          `<li>${item.quantity} × ${escapeHtml(item.description ?? "")}: ${(item.amount_total / 100).toFixed(2)} ${item.currency.toUpperCase()}</li>`,
      )
      .join("");
    const manual = deps.ctx.store.data.sessionSettings[session.id]?.captureMethod === "manual";
    const buttons = outcomes
      .filter((outcome) => (manual ? outcome !== "paid" : outcome !== "authorized"))
      .map((outcome) => `<button name="outcome" value="${outcome}">${outcome.replace("_", " ")}</button>`)
      .join(" ");
    const total = ((session.amount_total ?? 0) / 100).toFixed(2);
    res.type("html").send(`<!doctype html><meta charset="utf-8"><title>Stripe sandbox checkout</title>
<h1>Stripe sandbox checkout</h1><p>Session <code>${escapeHtml(session.id)}</code>: <b>${escapeHtml(session.status ?? "")}</b></p>
<ul>${items}</ul><p>Total ${total} ${(session.currency ?? "").toUpperCase()}</p>
${session.status === "open" ? `<form method="post">${buttons}</form>` : ""}`);
  });

  router.post("/:id", express.text({ type: "application/x-www-form-urlencoded" }), async (req, res) => {
    const outcome = parseStripeParams(typeof req.body === "string" ? req.body : "").outcome;
    if (typeof outcome !== "string" || !outcomes.includes(outcome as CompletionOutcome)) {
      res.status(400).type("html").send("<h1>Unknown outcome</h1>");
      return;
    }
    try {
      const result = await deps.control.completeCheckoutSession(req.params.id, outcome as CompletionOutcome);
      const successUrl = result.checkoutSession?.success_url;
      if (outcome !== "declined" && successUrl) {
        res.redirect(303, successUrl.replace("{CHECKOUT_SESSION_ID}", req.params.id));
      } else {
        res.redirect(303, req.originalUrl);
      }
    } catch (error) {
      if (!(error instanceof OutcomeNotPossible || error instanceof StripeApiError)) throw error;
      res
        .status(409)
        .type("html")
        .send(`<h1>${escapeHtml(error.message)}</h1>`);
    }
  });
  return router;
}
