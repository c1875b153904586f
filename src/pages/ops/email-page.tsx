import { Router } from "express";
import { emailTemplates } from "../../notifications/templates";
import { formatTime, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout } from "./layout";
import { orderOr404 } from "./order-page";
import { framedBySelf } from "../../http/security-headers";
import { emailFrameSandbox, linksOpenOutside } from "../email-frame";

/** GET /ops/orders/:id/emails/:emailId (and its /html): one e-mail, rendered again. */
export function emailPage(deps: OpsConsoleDeps): Router {
  const router = Router();
  router.get("/ops/orders/:id/emails/:emailId", async (req, res) => {
    const order = await orderOr404(deps, req, res);
    if (!order) return;
    const email = order.emails.find((e) => e.id === req.params.emailId);
    if (!email) {
      res.status(404).type("text").send("No such e-mail");
      return;
    }
    sendPage(
      res,
      <OpsLayout title={`E-mail ${email.template}`} csrf={csrfOf(deps, req)}>
        <h1>
          {email.template} <span class="badge">{email.status}</span>
        </h1>
        <p class="small">
          To {email.recipient} · Message-ID <code>{email.messageId}</code> · sent {formatTime(email.sentAt)} ·{" "}
          <a href={`/ops/orders/${order.id}`}>back to the order</a>
        </p>
        <p class="muted small">Rendered again from the order's record with the template it was sent with.</p>
        <iframe
          sandbox={emailFrameSandbox}
          title="E-mail"
          src={`/ops/orders/${order.id}/emails/${email.id}/html`}
        />
      </OpsLayout>,
    );
  });

  router.get("/ops/orders/:id/emails/:emailId/html", async (req, res) => {
    const order = await orderOr404(deps, req, res);
    const email = order?.emails.find((e) => e.id === req.params.emailId);
    if (!order) return;
    if (!email || !(email.template in emailTemplates)) {
      res.status(404).type("text").send("No such e-mail");
      return;
    }
    const content = await deps.renderer.render(order.id, email.template as keyof typeof emailTemplates);
    // Shown in a sandboxed iframe; the header sandboxes it when opened directly too.
    res.set(framedBySelf);
    res.type("html").send(linksOpenOutside(content.html));
  });
  return router;
}
