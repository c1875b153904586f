import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { pinoHttp } from "pino-http";
import type { Logger } from "../logger";
import { redactUrlCredentials } from "../shared/redact-url";

const quietPaths = new Set(["/healthz", "/readyz", "/metrics"]);

const acceptableRequestId = /^[\w.:-]{1,128}$/;

/** Honours a caller's X-Request-Id when it is sane, otherwise mints one, and echoes it back. */
function requestId(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers["x-request-id"];
  const id = typeof given === "string" && acceptableRequestId.test(given) ? given : randomUUID();
  res.setHeader("X-Request-Id", id);
  return id;
}

export function requestLogging(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: requestId,
    // Health probes and scrapes every few seconds would drown the log.
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
