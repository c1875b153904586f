import { createHash, createHmac } from "node:crypto";
import { secretsEqual } from "../shared/constant-time";

/**
 * Every link we hand a customer (pages, redirects, e-mails) names an order only together with an
 * HMAC over it, so changing the id in a link finds nothing: the signature no longer matches. The
 * purpose is part of what is signed, so a tracking link cannot be replayed as a review link.
 */
export type LinkPurpose = "order" | "review" | "checkout-cancelled";

export interface CustomerLinks {
  /** The order's status page (also where the success page points after settling). */
  order(orderId: string): string;
  review(orderId: string): string;
  checkoutCancelled(orderId: string): string;
  /** Stripe fills in {CHECKOUT_SESSION_ID}: an unguessable id the success page looks the order up by. */
  checkoutSuccess(): string;
  track(trackingNumber: string): string;
  /** True when `signature` is ours for this purpose and order. */
  verify(purpose: LinkPurpose, orderId: string, signature: unknown): boolean;
  sign(purpose: LinkPurpose, orderId: string): string;
}

/** A key of its own for links, derived when no LINK_SIGNING_SECRET is configured (development). */
export function deriveLinkSecret(adminToken: string): string {
  return createHash("sha256").update(`order-fulfillment link signing\0${adminToken}`).digest("base64url");
}

export function createCustomerLinks(options: { publicUrl: string; secret: string }): CustomerLinks {
  const base = options.publicUrl.replace(/\/+$/, "");
  const sign = (purpose: LinkPurpose, orderId: string) =>
    // 128 bits are plenty against guessing and keep the links short.
    createHmac("sha256", options.secret).update(`${purpose}\0${orderId}`).digest("base64url").slice(0, 22);
  const path = (purpose: LinkPurpose, route: string, orderId: string) =>
    `${base}${route}?sig=${sign(purpose, orderId)}`;

  return {
    sign,
    order: (orderId) => path("order", `/orders/${encodeURIComponent(orderId)}`, orderId),
    review: (orderId) => path("review", `/orders/${encodeURIComponent(orderId)}/review`, orderId),
    checkoutCancelled: (orderId) =>
      `${base}/checkout/cancelled?order_id=${encodeURIComponent(orderId)}&sig=${sign("checkout-cancelled", orderId)}`,
    checkoutSuccess: () => `${base}/checkout/success?session_id={CHECKOUT_SESSION_ID}`,
    track: (trackingNumber) => `${base}/track/${encodeURIComponent(trackingNumber)}`,
    verify(purpose, orderId, signature) {
      if (typeof signature !== "string") return false;
      return secretsEqual(signature, sign(purpose, orderId));
    },
  };
}
