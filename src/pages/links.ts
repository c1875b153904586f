import { createHash, createHmac } from "node:crypto";
import { secretsEqual } from "../shared/constant-time";

/**
 * Every link we hand a customer (pages, redirects, e-mails) names an order only together with an
 * HMAC over it, so changing the id in a link finds nothing: the signature no longer matches. The
 * purpose is part of what is signed, so a tracking link cannot be replayed as a review link.
 *
 * A link also expires (LINK_TTL, 90 days by default: the review e-mail goes out weeks after
 * delivery and is signed when it is sent). The expiry travels in the signature parameter,
 * `sig=<expiry, unix seconds in base 36>.<HMAC over purpose, order and expiry>`, so moving it
 * breaks the signature. An expired link is still recognisably ours: its page says so and offers
 * a fresh one, sent to the order's own address (src/pages/customer/fresh-link.tsx).
 */
export type LinkPurpose = "order" | "review" | "checkout-cancelled" | "address";

/** `expired`: ours, but past its expiry (or signed before links had one). */
export type LinkCheck = "valid" | "expired" | "invalid";

export interface CustomerLinks {
  /** The order's status page (also where the success page points after settling). */
  order(orderId: string): string;
  review(orderId: string): string;
  /** Where the customer corrects a delivery address the carrier cannot deliver to. */
  address(orderId: string): string;
  checkoutCancelled(orderId: string): string;
  /** Stripe fills in {CHECKOUT_SESSION_ID}: an unguessable id the success page looks the order up by. */
  checkoutSuccess(): string;
  track(trackingNumber: string): string;
  /** True when `signature` is ours for this purpose and order, and has not expired. */
  verify(purpose: LinkPurpose, orderId: string, signature: unknown): boolean;
  check(purpose: LinkPurpose, orderId: string, signature: unknown): LinkCheck;
  /** A signature valid from now for the links' time to live. */
  sign(purpose: LinkPurpose, orderId: string): string;
}

/** When LINK_TTL is not configured. */
export const defaultLinkTtlMs = 90 * 24 * 60 * 60 * 1000;

/** A key of its own for links, derived when no LINK_SIGNING_SECRET is configured (development). */
export function deriveLinkSecret(adminToken: string): string {
  return createHash("sha256").update(`order-fulfillment link signing\0${adminToken}`).digest("base64url");
}

const signaturePattern = /^([0-9a-z]{1,10})\.([\w-]{22})$/;
const legacyPattern = /^[\w-]{22}$/;

export function createCustomerLinks(options: {
  publicUrl: string;
  secret: string;
  ttlMs?: number;
  now?: () => number;
}): CustomerLinks {
  const base = options.publicUrl.replace(/\/+$/, "");
  const ttlMs = options.ttlMs ?? defaultLinkTtlMs;
  const now = options.now ?? Date.now;
  // 128 bits are plenty against guessing and keep the links short.
  const mac = (message: string) =>
    createHmac("sha256", options.secret).update(message).digest("base64url").slice(0, 22);
  const sign = (purpose: LinkPurpose, orderId: string) => {
    const expiry = Math.ceil((now() + ttlMs) / 1000).toString(36);
    return `${expiry}.${mac(`${purpose}\0${orderId}\0${expiry}`)}`;
  };
  const path = (purpose: LinkPurpose, route: string, orderId: string) =>
    `${base}${route}?sig=${sign(purpose, orderId)}`;

  const check = (purpose: LinkPurpose, orderId: string, signature: unknown): LinkCheck => {
    if (typeof signature !== "string") return "invalid";
    const parts = signaturePattern.exec(signature);
    if (parts) {
      const [, expiry = "", given = ""] = parts;
      if (!secretsEqual(given, mac(`${purpose}\0${orderId}\0${expiry}`))) return "invalid";
      return Number.parseInt(expiry, 36) * 1000 > now() ? "valid" : "expired";
    }
    // Signed before links expired: ours, so its owner may get a fresh one, but no longer good.
    if (legacyPattern.test(signature) && secretsEqual(signature, mac(`${purpose}\0${orderId}`)))
      return "expired";
    return "invalid";
  };

  return {
    sign,
    order: (orderId) => path("order", `/orders/${encodeURIComponent(orderId)}`, orderId),
    review: (orderId) => path("review", `/orders/${encodeURIComponent(orderId)}/review`, orderId),
    address: (orderId) => path("address", `/orders/${encodeURIComponent(orderId)}/address`, orderId),
    checkoutCancelled: (orderId) =>
      `${base}/checkout/cancelled?order_id=${encodeURIComponent(orderId)}&sig=${sign("checkout-cancelled", orderId)}`,
    checkoutSuccess: () => `${base}/checkout/success?session_id={CHECKOUT_SESSION_ID}`,
    track: (trackingNumber) => `${base}/track/${encodeURIComponent(trackingNumber)}`,
    check,
    verify: (purpose, orderId, signature) => check(purpose, orderId, signature) === "valid",
  };
}
