import type { IncomingMessage, ServerResponse } from "node:http";
import type { Express } from "express";
import { isShimOn } from "./switches";

/** Express's entry for each request: the app function, app.listen()'s server and supertest call it. */
type ExpressEntry = (req: IncomingMessage, res: ServerResponse, callback?: (error?: unknown) => void) => void;

/** A route answered on node's request and response alone, before express sets the request up. */
export interface EarlyRoute {
  method: string;
  /** The exact URL (no query string, no trailing slash): anything else goes through express. */
  url: string;
  /** Calls `fail` with the error to have express's error handler answer it. */
  serve(req: IncomingMessage, res: ServerResponse, fail: (error: unknown) => void): void;
}

const failedEarly = Symbol("early route failed");
type EarlyRequest = IncomingMessage & { [failedEarly]?: { error: unknown } };

/**
 * Answers one exact method and URL before express: express's set-up of each request (its request
 * and response prototypes swapped in, the router's walk) cost more CPU than all the rest of a
 * Stripe webhook delivery's HTTP handling (docs/decisions/0009-stripe-webhook-served-before-express.md).
 * It wraps `app.handle`, express 5's internal entry (not a documented API): the app function,
 * `app.listen()` and supertest all call it, so tests and production take the same path.
 *
 * Call it first, before any other `app.use`: a request that fails is handed to express with its
 * error, and the middleware installed here passes it on, so the app's error handler answers it
 * as it answers the routes' errors. If express stopped calling `app.handle` for each request, the
 * requests would take the app's own route for the URL (which must exist): correct, only slower;
 * test/http/stripe-webhook-first.test.ts checks that the early path is the one taken.
 * Returns false, installing nothing, when the shim is switched off for a measurement.
 */
export function answerBeforeExpress(app: Express, route: EarlyRoute): boolean {
  if (!isShimOn("express-entry")) return false;
  const entry = app as Express & { handle: ExpressEntry };
  const expressHandle: ExpressEntry = entry.handle.bind(app);
  entry.handle = (req: EarlyRequest, res, callback) => {
    if (req.method !== route.method || req.url !== route.url) {
      expressHandle(req, res, callback);
      return;
    }
    route.serve(req, res, (error) => {
      req[failedEarly] = { error };
      expressHandle(req, res, callback);
    });
  };
  app.use((req: EarlyRequest, _res, next) => {
    const failed = req[failedEarly];
    if (failed) next(failed.error);
    else next();
  });
  return true;
}
