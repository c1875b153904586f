import Stripe from "stripe";

export type StripeClient = Stripe;

export interface StripeClientOptions {
  secretKey: string;
  /** STRIPE_API_BASE, e.g. http://127.0.0.1:12111 for the sandbox; unset means api.stripe.com. */
  apiBase?: string;
  timeoutMs?: number;
  maxNetworkRetries?: number;
}

/**
 * Defaults, and why:
 * - timeout 8 s instead of stripe-node's 80 s. Every call here sits on a path with a deadline of
 *   its own (a customer waiting on checkout, Stripe waiting on our webhook answer, an Inngest step),
 *   and Stripe answers these endpoints in well under a second; a call that hangs should fail fast
 *   and be retried by the layer that owns the retry.
 * - maxNetworkRetries 0. Each caller already retries durably and idempotently: Stripe redelivers
 *   a webhook we answer 5xx for days, Inngest retries a failed step with backoff, and checkout sends
 *   an idempotency key derived from the order id, so the client's retry is safe. Retrying inside
 *   the SDK as well would multiply the worst-case latency (attempts × timeout) and hide failures
 *   from the layer that counts them. stripe-node still retries a connection that closed before any
 *   answer once (hard-coded), which is the one case where an immediate retry is clearly right.
 * - telemetry off. With it on, every request carries the previous request's latency to Stripe
 *   (X-Stripe-Client-Telemetry) and rebuilds a client user agent with the OS release (a system call
 *   per request) and an install id the SDK writes under ~/.config/stripe. We measure our own
 *   latencies; leaving it off changes nothing in what a request asks Stripe to do (no retry or
 *   idempotency change) and saves that per-request work on the webhook's lookup (docs/benchmarks.md).
 */
export function createStripeClient(options: StripeClientOptions): StripeClient {
  const base = options.apiBase ? new URL(options.apiBase) : undefined;
  const protocol = base?.protocol === "http:" ? "http" : "https";
  return new Stripe(options.secretKey, {
    timeout: options.timeoutMs ?? 8_000,
    maxNetworkRetries: options.maxNetworkRetries ?? 0,
    telemetry: false,
    appInfo: { name: "order-fulfillment" },
    ...(base
      ? {
          host: base.hostname.replace(/^\[(.*)\]$/, "$1"),
          port: base.port === "" ? (protocol === "http" ? 80 : 443) : Number(base.port),
          protocol,
        }
      : {}),
  });
}

/** A live-mode secret or restricted key (`sk_live_…`, `rk_live_…`); test keys and none are not. */
export function stripeKeyIsLive(secretKey: string | undefined): boolean {
  return /^(sk|rk)_live_/.test(secretKey ?? "");
}
