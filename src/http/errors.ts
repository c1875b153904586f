import type { ErrorRequestHandler, RequestHandler } from "express";
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from "../db/unavailable";
import { AppError, httpStatusByCode, isAppError, type ErrorCode } from "../errors";
import { redactUrlCredentials } from "../shared/redact-url";
import { nulRefusedByDatabase } from "./refuse-nul";

/** Seconds a 503 asks the client to wait (Retry-After) before it tries again. */
export const retryAfterSeconds = databaseRetryAfterSeconds;

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

export function errorBody(error: AppError): ErrorBody {
  const body: ErrorBody = { error: { code: error.code, message: error.message } };
  if (error.details !== undefined) body.error.details = error.details;
  return body;
}

export const notFound: RequestHandler = (req, _res, next) => {
  next(new AppError("route_not_found", `No route for ${req.method} ${req.path}`));
};

/** Errors thrown by body parsers carry `type` and `status`; translate the ones clients cause. */
function fromBodyParser(error: unknown): AppError | undefined {
  if (typeof error !== "object" || error === null || !("type" in error)) return undefined;
  switch ((error as { type: unknown }).type) {
    case "entity.too.large":
      return new AppError("payload_too_large", "Request body is too large");
    case "entity.parse.failed":
      return new AppError("invalid_json", "Request body is not valid JSON");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AppError("unsupported_media_type", "Unsupported request body encoding");
    default:
      return undefined;
  }
}

/**
 * Errors raised by the HTTP stack beneath us with a client status of their own (http-errors'
 * `status`: a body that cannot be inflated, a URL whose percent-encoding is broken) keep it.
 */
function fromHttpLayer(error: unknown): AppError | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  const code = typeof status === "number" ? status : statusCode;
  if (typeof code !== "number" || code < 400 || code > 499) return undefined;
  const known = (Object.keys(httpStatusByCode) as ErrorCode[]).find((c) => httpStatusByCode[c] === code);
  const message =
    error instanceof URIError ? "The URL is not correctly percent-encoded" : "The request is malformed";
  return new AppError(code === 400 || !known ? "bad_request" : known, message, { cause: error });
}

/**
 * The database gone (refused, shutting down, no connection in time) on any route, through Prisma
 * or raw pg: 503 database_unavailable, so clients and load balancers retry instead of seeing a bug.
 */
function fromDatabase(error: unknown): AppError | undefined {
  if (!isDatabaseUnavailable(error)) return undefined;
  return new AppError("database_unavailable", "The database is unavailable; retry shortly", { cause: error });
}

/** The one place errors become HTTP responses; 5xx details stay in the log, never in the reply. */
export const errorHandler: ErrorRequestHandler = (error: unknown, req, res, next) => {
  if (res.headersSent) {
    next(error);
    return;
  }
  const given = isAppError(error) ? error : (fromBodyParser(error) ?? fromHttpLayer(error));
  const appError =
    given && given.httpStatus !== 500 ? given : (nulRefusedByDatabase(error) ?? fromDatabase(error) ?? given);
  if (appError && appError.httpStatus < 500) {
    res.status(appError.httpStatus).json(errorBody(appError));
    return;
  }
  if (appError?.httpStatus === 503) {
    // Expected during an outage, once per request: the cause's message, no stack.
    req.log.warn({ code: appError.code, cause: causeOf(appError) }, "request refused: unavailable");
    if (!res.hasHeader("Retry-After")) res.setHeader("Retry-After", String(retryAfterSeconds));
    res.status(503).json({ error: { code: appError.code, message: appError.message } });
    return;
  }
  req.log.error({ err: error }, "request failed");
  const status = appError?.httpStatus ?? 500;
  const code = appError?.code ?? "internal_error";
  res
    .status(status)
    .json({ error: { code, message: "Something went wrong on our side; it has been logged." } });
};

function causeOf(error: AppError): string {
  const cause = error.cause;
  return redactUrlCredentials(cause instanceof Error ? cause.message : String(cause ?? error.message));
}
