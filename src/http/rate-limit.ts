import type { Request, RequestHandler } from "express";
import { rateLimit as expressRateLimit, type RateLimitInfo } from "express-rate-limit";
import { AppError } from "../errors";
import { secretsEqual } from "../shared/constant-time";

export interface AdminRateLimitOptions {
  /** Failed (not correctly authenticated) requests a client may make per window. */
  limit: number;
  windowMs: number;
  /** The admin bearer token: a request carrying it is never counted and never throttled. */
  token: string;
}

function carriesToken(req: Request, token: string): boolean {
  const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? "");
  return match?.[1] !== undefined && secretsEqual(match[1], token);
}

/**
 * The admin API's brake on token guessing, with express-rate-limit (memory store: each replica
 * counts on its own, enough for a low-traffic admin API):
 *
 * - only requests without the valid token count, and a request with it is never throttled, so
 *   nobody can lock ops out by sending bad tokens;
 * - counted per client (`req.ip`): the socket address, or with TRUST_PROXY set the address the
 *   trusted proxies report in X-Forwarded-For, so clients behind a proxy do not share one bucket.
 *
 * An exhausted client gets 429 `rate_limited` with Retry-After in seconds.
 */
export function adminRateLimit(options: AdminRateLimitOptions): RequestHandler {
  return expressRateLimit({
    windowMs: options.windowMs,
    limit: options.limit,
    standardHeaders: "draft-7",
    legacyHeaders: false,
    skip: (req) => carriesToken(req, options.token),
    handler: (req, res, next) => {
      const info = (req as Request & { rateLimit?: RateLimitInfo }).rateLimit;
      const resetTime = info?.resetTime?.getTime() ?? Date.now() + options.windowMs;
      const retryAfterSeconds = Math.max(1, Math.ceil((resetTime - Date.now()) / 1000));
      res.setHeader("Retry-After", String(retryAfterSeconds));
      next(new AppError("rate_limited", `Too many requests; retry in ${retryAfterSeconds}s`));
    },
  });
}
