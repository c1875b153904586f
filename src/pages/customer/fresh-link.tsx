import express, { type Request, type Response, Router } from "express";
import { rateLimit } from "express-rate-limit";
import { z } from "zod";
import type { FreshLinks } from "../../notifications/fresh-link";
import { MessagePage, sendPage } from "../layout";
import type { CustomerLinks, LinkPurpose } from "../links";

const purposes = ["order", "review", "checkout-cancelled"] as const satisfies readonly LinkPurpose[];
const askForm = z.object({ purpose: z.enum(purposes), sig: z.string().max(64) });
const uuid = z.uuid();

/**
 * 410: the link was ours but has expired. The page offers a fresh link by e-mail; the request
 * carries the expired signature back, which is what shows that the asker once had a real link.
 */
export function sendExpiredLink(res: Response, orderId: string, purpose: LinkPurpose, sig: string): void {
  sendPage(
    res,
    <MessagePage title="Link expired">
      <p>
        This link has expired. Links in our e-mails last a few months, so that an old one cannot open your
        order.
      </p>
      <form method="post" action={`/orders/${orderId}/fresh-link`}>
        <input type="hidden" name="purpose" value={purpose} />
        <input type="hidden" name="sig" value={sig} />
        <p>We can e-mail a fresh link to the address the order was placed with.</p>
        <button type="submit">E-mail me a fresh link</button>
      </form>
    </MessagePage>,
    410,
  );
}

/** The same answer whatever happened next: whether an e-mail went out tells an asker nothing. */
function sendAsked(res: Response): void {
  sendPage(
    res,
    <MessagePage title="Check your e-mail">
      <p>
        If this order is still on record, a fresh link is on its way to the address it was placed with. It can
        take a few minutes; only one is sent every quarter of an hour.
      </p>
    </MessagePage>,
  );
}

function sendNotValid(res: Response): void {
  sendPage(
    res,
    <MessagePage title="Link not valid">
      <p>This order link is not valid. Please use the link from your e-mail or the checkout.</p>
    </MessagePage>,
    404,
  );
}

/**
 * POST /orders/:id/fresh-link. Rate-limited per client (express-rate-limit, per replica) on top of
 * the one e-mail per order per window that src/notifications/fresh-link.ts keeps: a leaked old link
 * can at most make the order's own customer receive a few e-mails.
 */
export function freshLinkRoute(deps: { links: CustomerLinks; freshLinks: FreshLinks }): Router {
  const router = Router();
  router.post(
    "/orders/:id/fresh-link",
    rateLimit({
      windowMs: 15 * 60 * 1000,
      limit: 10,
      standardHeaders: "draft-7",
      legacyHeaders: false,
      handler: (_req, res) => {
        sendPage(
          res,
          <MessagePage title="Too many requests">
            <p>Too many fresh links were asked for from here; please try again later.</p>
          </MessagePage>,
          429,
        );
      },
    }),
    express.urlencoded({ extended: false, limit: "2kb" }),
    async (req: Request, res: Response) => {
      const id = String(req.params.id);
      const form = askForm.safeParse(req.body);
      if (!uuid.safeParse(id).success || !form.success) return sendNotValid(res);
      if (deps.links.check(form.data.purpose, id, form.data.sig) === "invalid") return sendNotValid(res);
      await deps.freshLinks.send(id);
      sendAsked(res);
    },
  );
  return router;
}
