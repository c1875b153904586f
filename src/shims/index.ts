/**
 * Every patch of another library's internals lives in this folder, and is listed here: the
 * library and the exact version it was written and measured against, what it reaches into, the
 * path it serves and what it was measured to buy there (`npm run bench:shims`; figures and
 * method in docs/decisions/0030-library-patches-in-one-module-re-measured.md). A patch that buys
 * under 5 % of its path is not kept: skipping stripe-node's caller stack around the webhook's
 * lookup measured 2.8 % (median 3.1 %, under the control pair's 4.5 %) and was removed; with the
 * client user agent built once as well, re-measured 7 Dec 2026 at 20-26 % of the lookup alone,
 * about 2-3 % of a delivery, and removed again (docs/decisions/0208, commit f9e63ad).
 * test/shims/pinned-versions.test.ts fails when an installed version differs from the one below:
 * re-run the shim's own test and `npm run bench:shims`, then update the version (or drop the shim).
 */
import type { ShimName } from "./switches";

export { answerBeforeExpress, type EarlyRoute } from "./express-entry";
export { skipRedactionWalkForPrimitives } from "./pino-redaction";
export { CachedHeadersInngest } from "./inngest-cached-headers";
export { BufferedResponse, responseOfBytes } from "./buffered-response";
export { isShimOn, switchShimsOffForMeasurement, type ShimName } from "./switches";

export interface Shim {
  name: ShimName;
  file: string;
  /** The npm package patched, or `node:undici` for the platform's own fetch classes. */
  library: string;
  version: string;
  reachesInto: string;
  path: string;
  /**
   * CPU per request on that path, `1 - on / off`: the mean, then each A/B pair and their median
   * (which decides) of the last measurement. The control pair (two identical processes) read
   * 5.0 % mean, 4.5 % median in that run: differences of that size are the method's own.
   */
  measuredGain: string;
  /** The test that checks the shim behaves as the library would. */
  test: string;
}

const webhook = "Stripe webhook, first delivery (POST /api/stripe/webhook)";

export const shims: readonly Shim[] = [
  {
    name: "express-entry",
    file: "src/shims/express-entry.ts",
    library: "express",
    version: "5.3.0",
    reachesInto: "app.handle, the app's internal per-request entry, wrapped",
    path: webhook,
    measuredGain: "38 % (pairs 39.5, 27.3, 41.6, 43.4 %; median 40.6 %), 2 Dec 2026, load 3-4",
    test: "test/http/stripe-webhook-first.test.ts",
  },
  {
    name: "pino-redaction-primitives",
    file: "src/shims/pino-redaction.ts",
    library: "pino",
    version: "10.4.0",
    reachesInto: "pino.symbols.stringifiersSym / wildcardFirstSym, a logger's redaction stringifiers",
    path: `${webhook}; every log line`,
    measuredGain: "18 % (pairs 12.2, 12.2, 13.7, 32.8 %; median 13.0 %), 2 Dec 2026, load 3-4",
    test: "test/ops/log-redaction-primitives.test.ts",
  },
  {
    name: "inngest-cached-headers",
    file: "src/shims/inngest-cached-headers.ts",
    library: "inngest",
    version: "4.24.0",
    reachesInto: "Inngest#headers (getter) and Inngest#setEnvVars, overridden in a subclass",
    path: `${webhook}; every event send`,
    measuredGain: "8 % (pairs 3.9, 9.7, 10.1, 8.7 %; median 9.2 %), 2 Dec 2026, load 3-4",
    test: "test/inngest/client.test.ts",
  },
  {
    name: "buffered-response",
    file: "src/shims/buffered-response.ts",
    library: "node:undici",
    version: "6.24.1",
    reachesInto: "the platform's Response, subclassed with its body members redefined on the prototype",
    path: `${webhook}; every event send and checkpoint of the Inngest client`,
    measuredGain: "6 % (pairs 15.2, 9.5, 10.3, -12.3 %; median 9.9 %), 2 Dec 2026, load 3-6",
    test: "test/http/keep-alive-fetch.test.ts",
  },
];
