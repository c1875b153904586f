import type { RequestHandler } from "express";
import { AppError } from "../errors";

/**
 * PostgreSQL text cannot hold U+0000: a value carrying one fails its statement with 22021 (or
 * 22P05 inside jsonb), which would surface as a 500 and, for a webhook, as days of retries. A NUL
 * is always the client's mistake, so it is a 400 wherever it comes in, decided here:
 *
 * - in the URL (path or query), for every route, before any route reads it;
 * - in a JSON body express parses, as the body's parse error;
 * - anywhere else (a signed Stripe event's fields, read by the Stripe library rather than us):
 *   PostgreSQL's own refusal, recognised by the error handler, before anything was stored.
 */
const nulMessage = "The request must not contain a NUL character (U+0000)";

/** %00 is the only percent-encoding of U+0000 (an overlong %C0%80 is a URIError, also a 400). */
const hasNul = (url: string) => url.includes("\u0000") || /%00/.test(url);

export const refuseNulInUrl: RequestHandler = (req, _res, next) => {
  if (hasNul(req.url)) next(new AppError("bad_request", nulMessage));
  else next();
};

/** express.json()'s reviver: a string carrying U+0000 makes the body a 400 invalid_json. */
export function refuseNulInJson(_key: string, value: unknown): unknown {
  if (typeof value === "string" && value.includes("\u0000")) {
    throw new SyntaxError("Strings in the request body must not contain U+0000");
  }
  return value;
}

/**
 * 22021 character_not_in_repertoire ("invalid byte sequence for encoding UTF8: 0x00") and 22P05
 * untranslatable_character ("unsupported Unicode escape sequence": \u0000 into jsonb), through
 * pg or through Prisma's adapter (`originalCode`, or `code` under kind "postgres").
 */
const nulCodes = new Set(["22021", "22P05"]);

export function nulRefusedByDatabase(error: unknown): AppError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth += 1) {
    const { code, originalCode, meta } = current as {
      code?: unknown;
      originalCode?: unknown;
      meta?: { driverAdapterError?: { cause?: { code?: unknown; originalCode?: unknown } } };
    };
    const adapterCause = meta?.driverAdapterError?.cause;
    const codes = [code, originalCode, adapterCause?.code, adapterCause?.originalCode];
    if (codes.some((value) => typeof value === "string" && nulCodes.has(value))) {
      return new AppError("bad_request", nulMessage, { cause: error });
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
