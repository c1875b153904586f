import express, { Router, type RequestHandler } from "express";
import { AppError } from "../errors";
import type { Logger } from "../logger";

/** Inngest's headers that this guard reads. */
const syncKindHeader = "x-inngest-sync-kind";
const signatureHeader = "x-inngest-signature";

export interface InngestEndpointOptions {
  /** serve() from inngest/express. */
  serve: RequestHandler;
  /** True when serve() checks signatures (a signing key, not dev mode): unsigned bodies stay small. */
  signaturesRequired: boolean;
  /** Body limit for a request that carries X-Inngest-Signature (memoised step state travels in it). */
  signedBodyLimit?: string;
  /** Body limit for a request without one (dev mode, or a caller that cannot be Inngest). */
  unsignedBodyLimit?: string;
  logger: Logger;
}

/**
 * The route Inngest calls, in front of the SDK's serve():
 *
 * - An out-of-band sync (a PUT without `x-inngest-sync-kind: in_band`) is refused with 401 in every
 *   mode. The SDK answers it without a signature check by POSTing our function list to Inngest's
 *   /fn/register, authenticated with our signing key, at a URL built from the request (its Host
 *   header unless the serve origin is pinned): anyone could re-point Inngest's calls, customer
 *   data included, at a host of their choosing. Nothing needs it: Inngest Cloud and the local
 *   engine sync in-band, a PUT that serve() signature-checks before answering with our config.
 * - The JSON body is parsed with a generous limit only when the request carries a signature
 *   header; serve() then verifies it (the signature covers the canonical JSON, so it can only be
 *   checked after parsing). Unsigned requests are refused by serve() anyway when signatures are
 *   required, so they get a small limit and cannot make us parse 16 MB first.
 */
export function inngestEndpoint(options: InngestEndpointOptions): Router {
  const signedJson = express.json({ limit: options.signedBodyLimit ?? "16mb" });
  const unsignedJson = options.signaturesRequired
    ? express.json({ limit: options.unsignedBodyLimit ?? "64kb" })
    : signedJson;

  const logger = options.logger.child({ component: "inngest-endpoint" });
  let unsignedGetSeen = false;

  const router = Router();
  router.use((req, res, next) => {
    // An unsigned GET is a browser or a scanner, never Inngest: answered here, as serve() would
    // (401), without serve()'s error-level line and stack for each one. Warned about once.
    if (options.signaturesRequired && req.method === "GET" && !req.headers[signatureHeader]) {
      const fields = { method: req.method, path: req.originalUrl.split("?")[0] };
      if (unsignedGetSeen) logger.debug(fields, "unsigned request to the Inngest endpoint refused");
      else
        logger.warn(
          fields,
          "unsigned request to the Inngest endpoint refused (further ones are logged at debug)",
        );
      unsignedGetSeen = true;
      res.status(401).json({ message: "Unauthorized" });
      return;
    }
    next();
  });
  router.use((req, _res, next) => {
    if (req.method === "PUT" && req.headers[syncKindHeader] !== "in_band") {
      next(new AppError("unauthorized", "Out-of-band sync is disabled; sync in-band from Inngest"));
      return;
    }
    next();
  });
  router.use((req, res, next) => (req.headers[signatureHeader] ? signedJson : unsignedJson)(req, res, next));
  router.use(options.serve);
  return router;
}
