import { Inngest, type Middleware } from "inngest";
import type { Config } from "../config";
import { createKeepAliveFetch } from "../http/keep-alive-fetch";
import { CachedHeadersInngest } from "../shims/inngest-cached-headers";
import { isShimOn } from "../shims/switches";
import type { Logger } from "../logger";

export const inngestAppId = "shop";

export type InngestClient = Inngest;

/**
 * The one Inngest client. Mode and endpoints come from our config rather than the SDK's own
 * environment lookup, so that config.ts stays the single source of truth:
 * - Inngest Cloud: INNGEST_EVENT_KEY + INNGEST_SIGNING_KEY;
 * - self-hosted Inngest: INNGEST_BASE_URL + INNGEST_SIGNING_KEY (+ event key);
 * - dev: INNGEST_DEV (the Inngest dev server) or `baseUrl` of the local engine started by server.ts.
 *   With `localEngineSigningKey` (what `npm start` does) the client runs in cloud mode against the
 *   local engine, so serve() checks every call's signature exactly as in production.
 */
export function createInngestClient(
  config: Config,
  options: {
    localEngineUrl?: string;
    localEngineSigningKey?: string;
    logger?: Logger;
    middleware?: Middleware.Class[];
  } = {},
): Inngest {
  const signedLocalEngine =
    options.localEngineUrl !== undefined && options.localEngineSigningKey !== undefined;
  const devServerUrl =
    config.INNGEST_DEV && /^https?:\/\//.test(config.INNGEST_DEV) ? config.INNGEST_DEV : undefined;
  const isDev =
    !signedLocalEngine &&
    (options.localEngineUrl !== undefined ||
      (config.INNGEST_DEV !== undefined && config.INNGEST_DEV !== "0"));
  // The SDK's client with its headers computed once (src/shims/inngest-cached-headers.ts).
  const Client = isShimOn("inngest-cached-headers") ? CachedHeadersInngest : Inngest;
  return new Client({
    id: inngestAppId,
    isDev,
    baseUrl: options.localEngineUrl ?? devServerUrl ?? config.INNGEST_BASE_URL,
    eventKey: config.INNGEST_EVENT_KEY ?? (isDev || signedLocalEngine ? "local" : undefined),
    signingKey: (signedLocalEngine ? options.localEngineSigningKey : undefined) ?? config.INNGEST_SIGNING_KEY,
    signingKeyFallback: config.INNGEST_SIGNING_KEY_FALLBACK,
    // Checkpoint every step before starting the next (docs/checkpointing.md): `claim` relies on
    // `claim-id` being durable, so a buffered pair re-run after a crash would lose its own claim.
    checkpointing: { bufferedSteps: 1, maxRuntime: "10s", maxInterval: 0 },
    // Events and checkpoints over node:http keep-alive agents: undici's per-request cost was a
    // fifth of a webhook's first delivery (src/http/keep-alive-fetch.ts, docs/benchmarks.md).
    fetch: createKeepAliveFetch(),
    ...(options.logger
      ? { logger: withoutDuplicateErrors(options.logger.child({ component: "inngest" })) }
      : {}),
    ...(options.middleware ? { middleware: options.middleware } : {}),
  });
}

/**
 * The SDK's built-in logger middleware logs every failed step attempt ("Inngest step error") and
 * every failed function ("Inngest function error") at error with the stack: beside our own lines
 * (src/metrics/workflow-observability.ts: one warn per attempt, the stack once at the final
 * failure) one failed step gave about 14 error lines. Those two messages go to debug; every other
 * line of the SDK keeps its level. The SDK has no option to turn them off.
 */
const duplicateSdkErrors = new Set(["Inngest step error", "Inngest function error"]);

type LogMethod = (...args: unknown[]) => void;

function withoutDuplicateErrors(logger: Logger): Logger {
  const isDuplicate = (args: unknown[]) =>
    args.some((arg) => typeof arg === "string" && duplicateSdkErrors.has(arg));
  return new Proxy(logger, {
    get(target, property, receiver) {
      if (property === "error") {
        return (...args: unknown[]) =>
          (isDuplicate(args) ? (target.debug as LogMethod) : (target.error as LogMethod)).apply(target, args);
      }
      if (property === "child") {
        return (bindings: Record<string, unknown>) =>
          withoutDuplicateErrors(target.child(bindings) as Logger);
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as LogMethod).bind(target) : value;
    },
  });
}
