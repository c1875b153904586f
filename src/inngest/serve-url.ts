import type { Config } from "../config";

/**
 * Where Inngest is told to call us, pinned from configuration: INNGEST_SERVE_ORIGIN when set (any
 * mode), else in production PUBLIC_URL's origin,
 * and its path (a reverse-proxy prefix, if any) followed by INNGEST_SERVE_PATH. Without these the
 * SDK builds the URL it announces from the request (Host, X-Forwarded-*), which a caller controls.
 * Outside production PUBLIC_URL may name something else (a tunnel for webhooks, a test host), so
 * the Inngest endpoint pins the origin to the address each sync request arrived at instead, which
 * no header can change either (src/http/inngest-endpoint.ts).
 */
export function pinnedServeUrl(config: Config): { serveOrigin?: string; servePath?: string } {
  if (config.INNGEST_SERVE_ORIGIN !== undefined) {
    const origin = new URL(config.INNGEST_SERVE_ORIGIN);
    const prefix = origin.pathname.replace(/\/+$/, "");
    return { serveOrigin: origin.origin, servePath: `${prefix}${config.INNGEST_SERVE_PATH}` };
  }
  if (!config.isProduction || config.PUBLIC_URL === undefined) return {};
  const publicUrl = new URL(config.PUBLIC_URL);
  const prefix = publicUrl.pathname.replace(/\/+$/, "");
  return { serveOrigin: publicUrl.origin, servePath: `${prefix}${config.INNGEST_SERVE_PATH}` };
}
