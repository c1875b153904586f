import type { ErrorRequestHandler, RequestHandler } from "express";
import { AppError, httpStatusByCode, isAppError, type ErrorCode } from "../errors";

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

/** The one place errors become HTTP responses; 5xx details stay in the log, never in the reply. */
export const errorHandler: ErrorRequestHandler = (error: unknown, req, res, next) => {
  if (res.headersSent) {
    next(error);
    return;
  }
  const appError = isAppError(error) ? error : (fromBodyParser(error) ?? fromHttpLayer(error));
  if (appError && appError.httpStatus < 500) {
    res.status(appError.httpStatus).json(errorBody(appError));
    return;
  }
  req.log.error({ err: error }, "request failed");
  const status = appError?.httpStatus ?? 500;
  const code = appError?.code ?? "internal_error";
  res
    .status(status)
    .json({ error: { code, message: "Something went wrong on our side; it has been logged." } });
};
