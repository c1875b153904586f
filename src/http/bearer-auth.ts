import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { AppError } from "../errors";

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Timing-safe comparison that also hides the token's length (both sides hashed first). */
export function safeEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

export function requireBearerToken(token: string): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer (.+)$/.exec(header);
    if (!match?.[1] || !safeEqual(match[1], token)) {
      next(new AppError("unauthorized", "A valid bearer token is required"));
      return;
    }
    next();
  };
}
