import type { RequestHandler } from "express";
import { AppError } from "../errors";
import { secretsEqual } from "../shared/constant-time";

export function requireBearerToken(token: string): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer (.+)$/.exec(header);
    if (!match?.[1] || !secretsEqual(match[1], token)) {
      next(new AppError("unauthorized", "A valid bearer token is required"));
      return;
    }
    next();
  };
}
