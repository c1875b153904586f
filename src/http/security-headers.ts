import helmet from "helmet";
import type { RequestHandler } from "express";

/**
 * The browser's defences on every response, with helmet:
 *
 * - Content-Security-Policy: scripts, styles, frames, fetches and form posts from our own origin
 *   only, nothing inline (the pages' stylesheet and htmx are served by src/pages), no plugins, no
 *   <base> rewriting; `frame-ancestors 'none'` (and X-Frame-Options: DENY for older browsers), so
 *   no other site can frame the console's confirm pages. The two routes that show an e-mail's
 *   HTML inside our own page set their own, sandboxed policy (`framedBySelf`).
 * - Referrer-Policy: no-referrer. A customer link carries its signature in the query string; a
 *   click from the order page to the carrier must not hand it to the carrier in Referer.
 * - Strict-Transport-Security in production only: the service is reached over TLS there, and a
 *   developer's http://127.0.0.1 must not be pinned to https. No upgrade-insecure-requests: with
 *   HSTS the browser upgrades already, and a deployment served over plain http keeps working.
 */
export function securityHeaders(options: {
  production: boolean;
  /** Origins images may come from besides ours: the shop's logo (SHOP_LOGO_URL). */
  imageOrigins?: readonly string[];
}): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:", ...(options.imageOrigins ?? [])],
        fontSrc: ["'self'"],
        connectSrc: ["'self'"],
        frameSrc: ["'self'"],
        objectSrc: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
    strictTransportSecurity: options.production
      ? { maxAge: 365 * 24 * 60 * 60, includeSubDomains: true }
      : false,
  });
}

/**
 * For a document we show in an iframe of our own page (an e-mail's HTML): sandboxed, no script,
 * its own inline styles (e-mails are written that way), framed by our origin only. Its links may
 * open a new tab outside the sandbox (src/pages/email-frame.ts), as they would from a mail reader,
 * instead of loading the order page inside the frame.
 */
export const framedBySelf = {
  "Content-Security-Policy":
    "sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'",
  "X-Frame-Options": "SAMEORIGIN",
} as const;
