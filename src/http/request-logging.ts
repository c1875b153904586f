import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pinoHttp } from "pino-http";
import type { Logger } from "../logger";
import { redactUrlCredentials } from "../shared/redact-url";

// Health probes and scrapes every few seconds, and the icon a browser asks for with every page.
const quietPaths = new Set(["/healthz", "/readyz", "/metrics", "/favicon.ico"]);

const acceptableRequestId = /^[\w.:-]{1,128}$/;

/** Honours a caller's X-Request-Id when it is sane, otherwise mints one, and echoes it back. */
function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers["x-request-id"];
  const id = typeof given === "string" && acceptableRequestId.test(given) ? given : randomUUID();
  res.setHeader("X-Request-Id", id);
  return id;
}

const servePath = "/api/inngest";

/**
 * The access log. The engine's serve() calls (two to eleven per order) are logged at debug when
 * they succeed: with debug off, pino-http would still make each a child logger with its request
 * bound and hook its answer, for a line never written. Those calls get the request id and the
 * service's logger as `req.log`, and a line only when they fail, in pino-http's shape and levels.
 */
export function requestLogging(logger: Logger) {
  const accessLog = fullAccessLog(logger);
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    if (!(req.url ?? "").startsWith(servePath) || logger.isLevelEnabled("debug")) {
      accessLog(req, res, next);
      return;
    }
    const started = Date.now();
    const id = requestId(req, res);
    Object.assign(req, { id, log: logger });
    res.once("finish", () => {
      if (res.statusCode < 400) return;
      const line = {
        req: { id, method: req.method, url: redactUrlCredentials(req.url ?? "") },
        res: { statusCode: res.statusCode },
        responseTime: Date.now() - started,
      };
      if (res.statusCode >= 500) {
        logger.error(
          { ...line, err: new Error(`failed with status code ${res.statusCode}`) },
          "request errored",
        );
      } else logger.warn(line, "request completed");
    });
    next();
  };
}

function fullAccessLog(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: requestId,
    // They would drown the log.
    autoLogging: { ignore: (req) => quietPaths.has(req.url ?? "") },
    customLogLevel: (req, res, error) => {
      if (error || res.statusCode >= 500) return "error";
      if (res.statusCode >= 400) return "warn";
      // The engine calls serve() several times per order: a successful call is debug.
      return (req.url ?? "").startsWith("/api/inngest") ? "debug" : "info";
    },
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        // A customer link's signature is a credential: logged as [redacted].
        url: redactUrlCredentials(req.url),
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
