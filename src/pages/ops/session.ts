import { createHash, createHmac, randomBytes } from "node:crypto";
import { parseCookie, stringifySetCookie, type SerializeOptions } from "cookie";
import type { Request, RequestHandler, Response } from "express";
import { secretsEqual } from "../../shared/constant-time";

/**
 * The ops console's login session: a cookie `<expires>.<nonce>.<mac>` MACed with a key derived
 * from the admin token (rotating the token logs everyone out), HttpOnly and SameSite=Strict. Forms
 * carry a CSRF token, a MAC of the session cookie, checked on every POST. Logout forgets the nonce
 * in this process until the cookie would have expired anyway.
 */
export const sessionCookie = "ops_session";
const sessionTtlMs = 8 * 3600_000;

export interface OpsSessions {
  /** Starts a session: sets the cookie. */
  login(res: Response): void;
  logout(req: Request, res: Response): void;
  /** The CSRF token of the request's session, or undefined without a valid session. */
  csrfToken(req: Request): string | undefined;
  /** Valid session cookie (and, for anything but GET/HEAD, a matching `_csrf` field) or redirect/403. */
  require: RequestHandler;
}

/** The cookie library's parser: a malformed value (a bad %-escape included) is read as sent, never thrown. */
function readCookie(req: Request, name: string): string | undefined {
  return parseCookie(req.headers.cookie ?? "")[name];
}

export function createOpsSessions(options: {
  adminToken: string;
  secure: boolean;
  now?: () => number;
}): OpsSessions {
  const key = createHash("sha256").update(`ops-console session\0${options.adminToken}`).digest();
  const now = options.now ?? Date.now;
  const revoked = new Map<string, number>();
  const mac = (value: string) => createHmac("sha256", key).update(value).digest("base64url");
  const attributes: SerializeOptions = {
    path: "/",
    httpOnly: true,
    sameSite: "strict",
    secure: options.secure,
  };

  const validSession = (req: Request): { value: string; nonce: string; expires: number } | undefined => {
    const value = readCookie(req, sessionCookie);
    if (!value) return undefined;
    const [expiresText, nonce, signature] = value.split(".");
    if (!expiresText || !nonce || !signature || !secretsEqual(signature, mac(`${expiresText}.${nonce}`)))
      return undefined;
    const expires = Number(expiresText);
    if (!(expires > now()) || revoked.has(nonce)) return undefined;
    return { value, nonce, expires };
  };
  const csrfOf = (sessionValue: string) => mac(`csrf\0${sessionValue}`).slice(0, 32);

  return {
    login(res) {
      const expires = now() + sessionTtlMs;
      const payload = `${expires}.${randomBytes(16).toString("base64url")}`;
      res.setHeader(
        "Set-Cookie",
        stringifySetCookie(sessionCookie, `${payload}.${mac(payload)}`, {
          ...attributes,
          maxAge: sessionTtlMs / 1000,
        }),
      );
    },
    logout(req, res) {
      const session = validSession(req);
      if (session) {
        revoked.set(session.nonce, session.expires);
        for (const [nonce, expires] of revoked) if (expires <= now()) revoked.delete(nonce);
      }
      res.setHeader("Set-Cookie", stringifySetCookie(sessionCookie, "", { ...attributes, maxAge: 0 }));
    },
    csrfToken(req) {
      const session = validSession(req);
      return session ? csrfOf(session.value) : undefined;
    },
    require(req, res, next) {
      const session = validSession(req);
      if (!session) {
        if (req.method === "GET" || req.method === "HEAD") {
          res.redirect(303, `/ops/login?next=${encodeURIComponent(req.originalUrl)}`);
        } else {
          res.status(401).type("text").send("Log in to the ops console first.");
        }
        return;
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        const given = (req.body as { _csrf?: unknown } | undefined)?._csrf;
        if (typeof given !== "string" || !secretsEqual(given, csrfOf(session.value))) {
          res
            .status(403)
            .type("text")
            .send("The form's CSRF token is missing or wrong; reload the page and retry.");
          return;
        }
      }
      next();
    },
  };
}
