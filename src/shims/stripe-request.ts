import type Stripe from "stripe";
import { isShimOn } from "./switches";

/**
 * Two pieces of stripe-node's per-request work that the webhook's Checkout Session lookup pays on
 * every first delivery and that buy it nothing (profile in docs/decisions/0208):
 *
 * - **The caller stack.** stripe-node 23 takes `new Error().stack` in `StripeResource._makeRequest`
 *   for every request, to append the caller's frames to a failed call's error ("Originating
 *   from:"), with no option to skip it. `withoutCallerStack` lowers `Error.stackTraceLimit` to 0
 *   around the synchronous part of one call (the capture happens before its first await) and
 *   restores it in `finally`: no other code runs meanwhile. A failed lookup keeps its type,
 *   message, status and own stack; only the caller's frames are gone, which the webhook's own
 *   error line replaces.
 * - **The client user agent.** `getClientUserAgent` rebuilds the `X-Stripe-Client-User-Agent`
 *   JSON on every request, and calls `os.release()` (a system call) for the platform even with
 *   telemetry off, when it then drops it. With telemetry off the header depends only on the
 *   library's version, the HTTP client and our app info, all fixed at construction: it is built
 *   once, by stripe-node itself, and the same text is given to every later request.
 *
 * src/shims/switches.ts switches both off for a measurement (`stripe-request`).
 */
export function withoutCallerStack<T>(call: () => T): T {
  if (!isShimOn("stripe-request")) return call();
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return call();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

interface UserAgentSource {
  getClientUserAgent(callback: (userAgent: string) => void): void;
  getTelemetryEnabled(): boolean;
}

/**
 * Has `stripe` build its client user agent once (see above). True when installed; false when the
 * shim is off, telemetry is on (the header then carries an install id read later) or the client
 * no longer has the methods this wraps (a stripe-node release that moved them: its own path runs).
 */
export function clientUserAgentOnce(stripe: Stripe): boolean {
  if (!isShimOn("stripe-request")) return false;
  const client = stripe as unknown as Partial<UserAgentSource>;
  if (typeof client.getClientUserAgent !== "function" || typeof client.getTelemetryEnabled !== "function") {
    return false;
  }
  if (client.getTelemetryEnabled.call(stripe)) return false;
  const build = client.getClientUserAgent.bind(stripe);
  let built: string | undefined;
  client.getClientUserAgent = (callback) => {
    if (built !== undefined) {
      callback(built);
      return;
    }
    build((userAgent) => {
      built = userAgent;
      callback(userAgent);
    });
  };
  return true;
}
