import type { Database } from "../db/client";
import type { EmailRenderer } from "./email-renderer";
import type { EmailSender } from "./email-sender";

/**
 * A customer whose link expired asks for a fresh one (src/pages/customer/fresh-link.tsx). The
 * e-mail goes to the address the order was placed with, never one given in the request, so
 * asking reveals nothing and can only reach the order's own customer.
 */
export interface FreshLinks {
  /** E-mails the order's links, freshly signed, at most once per order per window. */
  send(orderId: string): Promise<void>;
}

/** One fresh-link e-mail per order per this window, however often it is asked for. */
export const freshLinkWindowMs = 15 * 60 * 1000;

export function createFreshLinks(deps: {
  db: Database;
  sender: EmailSender;
  renderer: EmailRenderer;
  now?: () => number;
}): FreshLinks {
  const now = deps.now ?? Date.now;
  return {
    async send(orderId) {
      const order = await deps.db.order.findUnique({
        where: { id: orderId },
        select: { id: true, email: true },
      });
      if (!order) return;
      // The window is in the key: the idempotent sender sends a repeat within it not at all.
      const idempotencyKey = `fresh-link-${order.id}-${Math.floor(now() / freshLinkWindowMs)}`;
      await deps.sender.send({
        idempotencyKey,
        orderId: order.id,
        template: "freshLink",
        to: order.email,
        content: await deps.renderer.render(order.id, "freshLink"),
      });
    },
  };
}
