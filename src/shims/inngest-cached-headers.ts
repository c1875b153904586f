import { Inngest } from "inngest";
/**
 * The SDK's client, with its request headers computed once instead of on every send: the
 * `headers` getter scans all of `process.env` each time (getProcessEnv), about 0.2 ms per event
 * sent, a tenth of a webhook's first delivery (docs/decisions/0012). They depend only on the
 * client's options and environment, so they are kept until the environment changes, which only
 * `setEnvVars` does (serve() calls it per request, with the same values in Node).
 * src/inngest/client.ts builds the SDK's own client instead when the shim is switched off.
 */
export class CachedHeadersInngest extends Inngest {
  private cachedHeaders: Record<string, string> | undefined;

  override get headers(): Record<string, string> {
    this.cachedHeaders ??= super.headers;
    // A copy per caller, as the getter gave: no caller can change another's.
    return { ...this.cachedHeaders };
  }

  override setEnvVars(env?: Record<string, string | undefined>): this {
    this.cachedHeaders = undefined;
    return super.setEnvVars(env);
  }
}
