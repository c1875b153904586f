import express, { Router, type Request, type RequestHandler } from "express";
import { rateLimit, type RateLimitInfo } from "express-rate-limit";
import { AppError } from "../errors";
import type { Logger } from "../logger";

/** Inngest's headers and query parameter that this guard reads. */
const signatureHeader = "x-inngest-signature";
const deployIdParam = "deployId";

export interface InngestEndpointOptions {
  /**
   * serve() from inngest/express, with `enableUnauthedSync: false`: in cloud mode it checks the
   * signature of every request, out-of-band syncs included (the SDK's default lets those through).
   */
  serve: RequestHandler;
  /**
   * serve() with `enableUnauthedSync: true`, reached only by an unsigned out-of-band PUT when the
   * operator opted in to unsigned syncs (INNGEST_ALLOW_UNSIGNED_SYNC). Unset: such a PUT gets 401.
   */
  serveUnsignedSync?: RequestHandler;
  /** True when serve() checks signatures (a signing key, not dev mode): unsigned bodies stay small. */
  signaturesRequired: boolean;
  /**
   * True when serve() has `serveOrigin`/`servePath` from configuration (PUBLIC_URL). Otherwise the
   * origin a sync announces is the address the request arrived at (the socket's), never Host or
   * X-Forwarded-*.
   */
  originPinned: boolean;
  /** Unsigned syncs (opt-in only) allowed per window, for the whole process (default 5 a minute). */
  unsignedSyncLimit?: { limit: number; windowMs: number };
  /** Body limit for a request that carries X-Inngest-Signature (memoised step state travels in it). */
  signedBodyLimit?: string;
  /** Body limit for a request without one (dev mode, or a caller that cannot be Inngest). */
  unsignedBodyLimit?: string;
  logger: Logger;
}

/**
 * The route Inngest calls, in front of the SDK's serve().
 *
 * Syncs (PUT). The Inngest dev server and self-hosted Inngest sync out-of-band: `PUT <app url>`
 * with body `{url}` (signed only when the server has a signing key), and the SDK answers by POSTing
 * our function list to Inngest's /fn/register, authenticated with our signing key. Inngest Cloud
 * syncs in-band (`x-inngest-sync-kind: in_band`, signed; the config is the reply). The SDK builds
 * the URL it announces from the request, so whoever can send the PUT could re-point Inngest's calls
 * (customer data included) at a host of their choosing. What closes that, without closing the door:
 * - the announced URL is pinned: serveOrigin/servePath from PUBLIC_URL, or else the socket's own
 *   address; Host and X-Forwarded-* are dropped and the query is cut to `deployId`, which only a
 *   signed request may carry (an unsigned one's is ignored);
 * - with a signing key, serve() checks the PUT's signature (enableUnauthedSync off), and an unsigned
 *   PUT gets 401 and registers nothing, unless the operator opted in to unsigned syncs (Inngest's
 *   documented `curl -X PUT <app>/api/inngest`): then it can only re-announce the pinned URL, and
 *   such syncs are rate-limited for the whole process so nobody can make the app hammer Inngest;
 * - in dev mode (no signing key: the dev server cannot sign) an unsigned PUT syncs.
 *
 * Bodies: the JSON body is parsed with a generous limit only when the request carries a signature
 * header; serve() then verifies it (the signature covers the canonical JSON, so it can only be
 * checked after parsing). Unsigned requests get a small limit when signatures are required.
 *
 * Unsigned GETs and POSTs when signatures are required are a browser, a scanner or a misconfigured
 * caller, never Inngest: answered 401 here, as serve() would, without serve()'s error-level line and
 * stack for each one; warned about once per method, then logged at debug.
 */
export function inngestEndpoint(options: InngestEndpointOptions): Router {
  const signedJson = express.json({ limit: options.signedBodyLimit ?? "16mb" });
  const unsignedJson = options.signaturesRequired
    ? express.json({ limit: options.unsignedBodyLimit ?? "64kb" })
    : signedJson;

  const logger = options.logger.child({ component: "inngest-endpoint" });
  const unsignedSeen = new Set<string>();
  const refuseUnsigned: RequestHandler = (req, res) => {
    const fields = { method: req.method, path: req.originalUrl.split("?")[0] };
    if (unsignedSeen.has(req.method))
      logger.debug(fields, "unsigned request to the Inngest endpoint refused");
    else
      logger.warn(
        fields,
        `unsigned ${req.method} to the Inngest endpoint refused (further ones are logged at debug)`,
      );
    unsignedSeen.add(req.method);
    res.status(401).json({ message: "Unauthorized" });
  };

  const limit = options.unsignedSyncLimit ?? { limit: 5, windowMs: 60_000 };
  // express-rate-limit (memory store, one bucket for the process): each unsigned sync costs a
  // call to Inngest, whoever sends it, so it is not counted per client.
  const unsignedSyncRateLimit = rateLimit({
    windowMs: limit.windowMs,
    limit: limit.limit,
    standardHeaders: "draft-7",
    legacyHeaders: false,
    keyGenerator: () => "unsigned-sync",
    // Its checks concern keys derived from client addresses, which this limiter does not use.
    validate: false,
    handler: (req, res, next) => {
      const info = (req as Request & { rateLimit?: RateLimitInfo }).rateLimit;
      const resetTime = info?.resetTime?.getTime() ?? Date.now() + limit.windowMs;
      const retryAfterSeconds = Math.max(1, Math.ceil((resetTime - Date.now()) / 1000));
      res.setHeader("Retry-After", String(retryAfterSeconds));
      logger.warn({ retryAfterSeconds }, "unsigned sync refused: too many in the window");
      next(new AppError("rate_limited", `Too many unsigned syncs; retry in ${retryAfterSeconds}s`));
    },
  });

  const router = Router();
  router.use((req, res, next) => {
    const signed = Boolean(req.headers[signatureHeader]);
    if (req.method === "PUT") {
      pinSyncRequest(req, { signed, originPinned: options.originPinned });
      if (signed || !options.signaturesRequired) {
        next();
        return;
      }
      if (!options.serveUnsignedSync) {
        refuseUnsigned(req, res, next);
        return;
      }
      // Opted in: out-of-band only (an unsigned in-band PUT could not pass serve() anyway).
      delete req.headers["x-inngest-sync-kind"];
      const serveUnsignedSync = options.serveUnsignedSync;
      unsignedSyncRateLimit(req, res, (error?: unknown) => {
        if (error) {
          next(error);
          return;
        }
        logger.info({ path: req.originalUrl }, "unsigned sync accepted (INNGEST_ALLOW_UNSIGNED_SYNC)");
        unsignedJson(req, res, (parseError?: unknown) =>
          parseError ? next(parseError) : serveUnsignedSync(req, res, next),
        );
      });
      return;
    }
    if (options.signaturesRequired && !signed && (req.method === "GET" || req.method === "POST")) {
      refuseUnsigned(req, res, next);
      return;
    }
    next();
  });
  router.use((req, res, next) => (req.headers[signatureHeader] ? signedJson : unsignedJson)(req, res, next));
  router.use(options.serve);
  return router;
}

/**
 * What a sync request may say about the URL the SDK announces: nothing. The express adapter builds
 * that URL from `req.originalUrl` (query included) and, without a pinned origin, from Host (and the
 * protocol from X-Forwarded-Proto behind a trusted proxy); it reads `deployId` from `req.query`,
 * which Express derives from `req.url`. So the announced URL loses its query, and only a signed
 * request keeps its `deployId`.
 */
function pinSyncRequest(req: Request, options: { signed: boolean; originPinned: boolean }): void {
  const deployId = options.signed
    ? new URL(req.originalUrl, "http://x").searchParams.get(deployIdParam)
    : null;
  const query = deployId ? `?${new URLSearchParams({ [deployIdParam]: deployId }).toString()}` : "";
  req.originalUrl = req.originalUrl.split("?")[0] ?? "";
  req.url = `${req.url.split("?")[0] ?? ""}${query}`;
  delete req.headers["x-forwarded-host"];
  delete req.headers["x-forwarded-proto"];
  delete req.headers.forwarded;
  if (!options.originPinned) {
    const address = req.socket.localAddress?.replace(/^::ffff:/, "") ?? "127.0.0.1";
    const host = address.includes(":") ? `[${address}]` : address;
    req.headers.host = `${host}:${req.socket.localPort ?? 80}`;
  }
}
