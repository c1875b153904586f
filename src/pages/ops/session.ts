import { createHash, createHmac, randomBytes } from "node:crypto";
import { parseCookie, stringifySetCookie, type SerializeOptions } from "cookie";
import type { Request, RequestHandler, Response } from "express";
import { secretsEqual } from "../../shared/constant-time";

/**
 * The ops console's login session: a cookie `<expires>.<nonce>.<mac>` MACed with a key derived
 * from the admin token (rotating the token logs everyone out), HttpOnly and SameSite=Strict. Forms
 * carry a CSRF token, a MAC of the session cookie, checked on every POST. Logout revokes the nonce
 * until the cookie would have expired anyway, in the store given: the database in the service
 * (src/db/ops-session-revocations.ts), so every replica refuses the cookie, also after a restart.
 */
export const sessionCookie = "ops_session";
const sessionTtlMs = 8 * 3600_000;

/** Where logouts are kept; keyed by a hash of the session's nonce. */
export interface SessionRevocations {
  revoke(nonceHash: string, expiresAt: Date): Promise<void>;
  isRevoked(nonceHash: string): Promise<boolean>;
}

/** Revocations this process alone sees (tests, and a console without a database). */
export function createMemorySessionRevocations(now: () => number = Date.now): SessionRevocations {
  const revoked = new Map<string, number>();
  return {
    revoke(nonceHash, expiresAt) {
      revoked.set(nonceHash, expiresAt.getTime());
      for (const [key, expires] of revoked) if (expires <= now()) revoked.delete(key);
      return Promise.resolve();
    },
    isRevoked: (nonceHash) => Promise.resolve(revoked.has(nonceHash)),
  };
}

export interface OpsSessions {
  /** Starts a session: sets the cookie. */
  login(res: Response): void;
  /** Revokes the request's session (durably, before it answers) and clears the cookie. */
  logout(req: Request, res: Response): Promise<void>;
  /**
   * The CSRF token of the request's session, or undefined without a valid cookie. Pages call it
   * behind `require`, which has checked the session is not revoked.
   */
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
  /** Unset: this process's memory (a restart forgets logouts). */
  revocations?: SessionRevocations;
}): OpsSessions {
  const key = createHash("sha256").update(`ops-console session\0${options.adminToken}`).digest();
  const now = options.now ?? Date.now;
  const revocations = options.revocations ?? createMemorySessionRevocations(now);
  const nonceHash = (nonce: string) => createHash("sha256").update(nonce).digest("base64url");
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
    if (!(expires > now())) return undefined;
    return { value, nonce, expires };
  };
  const liveSession = async (req: Request) => {
    const session = validSession(req);
    if (!session || (await revocations.isRevoked(nonceHash(session.nonce)))) return undefined;
    return session;
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
    async logout(req, res) {
      const session = validSession(req);
      if (session) await revocations.revoke(nonceHash(session.nonce), new Date(session.expires));
      res.setHeader("Set-Cookie", stringifySetCookie(sessionCookie, "", { ...attributes, maxAge: 0 }));
    },
    csrfToken(req) {
      const session = validSession(req);
      return session ? csrfOf(session.value) : undefined;
    },
    async require(req, res, next) {
      const session = await liveSession(req);
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
