import express, { type Router } from "express";
import type Stripe from "stripe";
import type { SandboxContext } from "./context";
import { OutcomeNotPossible, type CompletionOutcome, retrieveCheckoutSession } from "./checkout-sessions";
import type { SandboxControl } from "./control";
import { StripeApiError } from "./errors";
import { parseStripeParams } from "./form";
import { minorToMajorText } from "../../shared/money";

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );

const outcomes: CompletionOutcome[] = ["paid", "authorized", "declined", "async_pending"];

/**
 * Tax as Stripe's page shows it: tax on top of the prices as "Tax", tax inside tax-inclusive
 * prices as "Includes tax" (it adds nothing to the total). The part on top is what the total
 * has beyond the lines, shipping and discount.
 */
function taxRows(session: Stripe.Checkout.Session, money: (minor: number) => string): string {
  if (session.automatic_tax.status !== "complete") {
    return `<tr><td>Tax</td><td class="num">Calculated when you pay</td></tr>`;
  }
  const totals = session.total_details;
  const onTop =
    (session.amount_total ?? 0) -
    ((session.amount_subtotal ?? 0) - (totals?.amount_discount ?? 0) + (totals?.amount_shipping ?? 0));
  const inside = (totals?.amount_tax ?? 0) - onTop;
  return [
    onTop > 0 || inside === 0 ? `<tr><td>Tax</td><td class="num">${money(onTop)}</td></tr>` : "",
    inside > 0 ? `<tr><td>Includes tax</td><td class="num">${money(inside)}</td></tr>` : "",
  ].join("");
}

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
    const currency = (session.currency ?? "").toUpperCase();
    // In the currency's own decimals, as Stripe's page shows them (¥1250 is 1250 JPY, not 12.50).
    const money = (minor: number) => `${currency ? minorToMajorText(minor, currency) : minor} ${currency}`;
    const items = (deps.ctx.store.data.lineItems[session.id] ?? [])
      .map(
        (item) =>
          `<tr><td>${item.quantity} × ${escapeHtml(item.description ?? "")}</td><td class="num">${money(item.amount_total)}</td></tr>`,
      )
      .join("");
    const manual = deps.ctx.store.data.sessionSettings[session.id]?.captureMethod === "manual";
    const labels: Record<CompletionOutcome, [string, string]> = {
      authorized: ["Pay (authorise card)", "The card is authorised; the shop captures it when it ships."],
      paid: ["Pay", "The card is charged now."],
      declined: ["Decline card", "The bank declines; the session stays open so you can try again."],
      async_pending: [
        "Pay later (bank debit)",
        "The payment stays processing until settled through /_sandbox.",
      ],
    };
    const buttons = outcomes
      .filter((outcome) => (manual ? outcome !== "paid" : outcome !== "authorized"))
      .map(
        (outcome) =>
          `<button name="outcome" value="${outcome}" class="${outcome === "declined" ? "secondary" : ""}">${labels[outcome][0]}</button><p class="hint">${labels[outcome][1]}</p>`,
      )
      .join("");
    const declined =
      req.query.declined === "1" ? `<p class="declined">Your card was declined. Try again.</p>` : "";
    const totals = session.total_details;
    const summaryRows = [
      `<tr><td>Subtotal</td><td class="num">${money(session.amount_subtotal ?? 0)}</td></tr>`,
      totals?.amount_discount
        ? `<tr><td>Discount</td><td class="num">−${money(totals.amount_discount)}</td></tr>`
        : "",
      session.shipping_cost
        ? `<tr><td>Shipping</td><td class="num">${money(session.shipping_cost.amount_subtotal)}</td></tr>`
        : "",
      session.automatic_tax.enabled ? taxRows(session, money) : "",
    ].join("");
    const chosenRate = session.shipping_cost?.shipping_rate;
    const shippingChoices = (session.shipping_options ?? [])
      .map((option) => {
        const rateId = option.shipping_rate as string;
        const rate = deps.ctx.store.data.shippingRates[rateId];
        return `<label class="option"><input type="radio" name="shipping_rate" value="${escapeHtml(rateId)}"${
          rateId === chosenRate ? " checked" : ""
        }> ${escapeHtml(rate?.display_name ?? rateId)} · ${money(option.shipping_amount)}</label>`;
      })
      .join("");
    const codeError = typeof req.query.code_error === "string" ? req.query.code_error : "";
    const codeForm =
      session.allow_promotion_codes && session.status === "open"
        ? `<form method="post" action="${escapeHtml(`${req.baseUrl}/${encodeURIComponent(session.id)}/promotion_code`)}" class="code">
<label>Promotion code <input name="code" autocomplete="off"></label><button class="secondary">Apply</button>
${codeError ? `<p class="declined" role="alert">${escapeHtml(codeError)}</p>` : ""}</form>`
        : "";
    res.type("html").send(`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Checkout · Stripe stand-in</title>
<style>
body{margin:0;font:16px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1a1f36;background:#f6f9fc}
.wrap{display:flex;flex-wrap:wrap;max-width:56rem;margin:0 auto;min-height:100vh}
.summary{flex:1 1 20rem;padding:2rem}.pay{flex:1 1 20rem;padding:2rem;background:#fff;box-shadow:-1px 0 0 #e3e8ee}
.total{font-size:2rem;font-weight:600;margin:.25rem 0 1.5rem}table{width:100%;border-collapse:collapse}
td{padding:.4rem 0;border-bottom:1px solid #e3e8ee}.num{text-align:right}.muted{color:#697386;font-size:.85rem}
button{width:100%;font:inherit;font-weight:600;border:0;border-radius:6px;padding:.7rem;background:#635bff;color:#fff;cursor:pointer;margin-top:.75rem}
button.secondary{background:#fff;color:#c0123c;border:1px solid #e3e8ee}.hint{margin:.25rem 0 0;color:#697386;font-size:.8rem}
.declined{color:#c0123c;font-weight:600}.option{display:block;margin:.25rem 0}fieldset{border:1px solid #e3e8ee;border-radius:6px}
.code{margin-bottom:1rem}.code input{font:inherit;padding:.4rem;border:1px solid #e3e8ee;border-radius:4px}.tag{display:inline-block;background:#fff3e0;color:#a35a00;border-radius:4px;padding:0 .4rem;font-size:.75rem;font-weight:600}
</style></head><body><div class="wrap">
<section class="summary"><div class="muted">${escapeHtml(deps.ctx.businessName)} <span class="tag">TEST MODE · Stripe stand-in</span></div>
<div class="muted">Pay</div><div class="total">${money(session.amount_total ?? 0)}</div>
<table>${items}${summaryRows}<tr><td><b>Total due</b></td><td class="num"><b>${money(session.amount_total ?? 0)}</b></td></tr></table>
<p class="muted">Session <code>${escapeHtml(session.id)}</code></p></section>
<section class="pay"><h1 style="font-size:1.2rem">Pay with card</h1>
<p class="muted">${escapeHtml(session.customer_email ?? "")}</p>${declined}
${
  session.status === "open"
    ? `${codeForm}<form method="post">${shippingChoices ? `<fieldset><legend>Shipping</legend>${shippingChoices}</fieldset>` : ""}${buttons}</form>${session.cancel_url ? `<p><a href="${escapeHtml(session.cancel_url)}">← Back to the shop (cancel)</a></p>` : ""}`
    : `<p>This checkout is <b>${escapeHtml(session.status ?? "")}</b>.</p>`
}
</section></div></body></html>`);
  });

  router.post(
    "/:id/promotion_code",
    express.text({ type: "application/x-www-form-urlencoded" }),
    (req, res) => {
      const code = parseStripeParams(typeof req.body === "string" ? req.body : "").code;
      const back = `${req.baseUrl}/${encodeURIComponent(req.params.id)}`;
      try {
        const result = deps.control.applyPromotionCode(req.params.id, typeof code === "string" ? code : "");
        res.redirect(303, result.error ? `${back}?code_error=${encodeURIComponent(result.error)}` : back);
      } catch (error) {
        if (!(error instanceof OutcomeNotPossible || error instanceof StripeApiError)) throw error;
        res
          .status(409)
          .type("html")
          .send(`<h1>${escapeHtml(error.message)}</h1>`);
      }
    },
  );

  router.post("/:id", express.text({ type: "application/x-www-form-urlencoded" }), async (req, res) => {
    const form = parseStripeParams(typeof req.body === "string" ? req.body : "");
    const outcome = form.outcome;
    const shippingRate = typeof form.shipping_rate === "string" ? form.shipping_rate : undefined;
    if (typeof outcome !== "string" || !outcomes.includes(outcome as CompletionOutcome)) {
      res.status(400).type("html").send("<h1>Unknown outcome</h1>");
      return;
    }
    try {
      const result = await deps.control.completeCheckoutSession(req.params.id, outcome as CompletionOutcome, {
        ...(shippingRate ? { shippingRate } : {}),
      });
      const successUrl = result.checkoutSession?.success_url;
      if (outcome !== "declined" && successUrl) {
        res.redirect(303, successUrl.replace("{CHECKOUT_SESSION_ID}", req.params.id));
      } else {
        res.redirect(303, `${req.baseUrl}/${encodeURIComponent(req.params.id)}?declined=1`);
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

/** The stand-in's `/`: what it is and where its pages are, instead of Express's "Cannot GET /". */
export function standInHome(ctx: SandboxContext): express.RequestHandler {
  return (_req, res) => {
    const sessions = Object.values(ctx.store.data.checkoutSessions)
      .slice(-20)
      .reverse()
      .map(
        (session) =>
          `<li><a href="/_sandbox/pay/${escapeHtml(session.id)}">${escapeHtml(session.id.slice(0, 24))}…</a> ${escapeHtml(session.status ?? "")}</li>`,
      )
      .join("");
    res.type("html").send(`<!doctype html><meta charset="utf-8"><title>Stripe stand-in</title>
<body style="font-family:sans-serif;max-width:40rem;margin:2rem auto;line-height:1.5">
<h1>Stripe stand-in</h1><p>A local stand-in for the parts of Stripe's API this service uses: <code>/v1/...</code> for stripe-node,
<code>/_sandbox/...</code> to play the customer, and a pay page per Checkout Session.</p>
<h2>Recent Checkout Sessions</h2><ul>${sessions || "<li>None yet.</li>"}</ul></body>`);
  };
}
