import type { RequestHandler } from "express";
import { AppError } from "../errors";

export interface RateLimitOptions {
  /** Requests a client may make in a burst; the bucket refills to this. */
  capacity: number;
  /** How long an empty bucket takes to refill completely. */
  refillMs: number;
  now?: () => number;
  /** Buckets kept at most; past it, full (idle) buckets are dropped first. */
  maxClients?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/**
 * A token bucket per client IP, in memory: enough to stop a client from hammering the admin API
 * or guessing its token, not a distributed quota (each replica counts on its own). An exhausted
 * client gets 429 `rate_limited` with Retry-After in seconds.
 *
 * The client is `req.ip`: the socket's address while Express's `trust proxy` is off. Behind a
 * proxy that makes every request one client, which for a low-traffic admin API is a global limit.
 */
export function rateLimit(options: RateLimitOptions): RequestHandler {
  const { capacity, refillMs } = options;
  const now = options.now ?? Date.now;
  const maxClients = options.maxClients ?? 10_000;
  const tokensPerMs = capacity / refillMs;
  const buckets = new Map<string, Bucket>();

  const refill = (bucket: Bucket, at: number) => {
    bucket.tokens = Math.min(capacity, bucket.tokens + (at - bucket.updatedAt) * tokensPerMs);
    bucket.updatedAt = at;
  };

  const makeRoom = (at: number) => {
    for (const [client, bucket] of buckets) {
      refill(bucket, at);
      if (bucket.tokens >= capacity) buckets.delete(client);
    }
    // Still full of active clients: forget the oldest rather than grow without bound.
    while (buckets.size >= maxClients) {
      const oldest = buckets.keys().next().value;
      if (oldest === undefined) break;
      buckets.delete(oldest);
    }
  };

  return (req, res, next) => {
    const at = now();
    const client = req.ip ?? req.socket.remoteAddress ?? "unknown";
    let bucket = buckets.get(client);
    if (!bucket) {
      if (buckets.size >= maxClients) makeRoom(at);
      bucket = { tokens: capacity, updatedAt: at };
      buckets.set(client, bucket);
    } else {
      refill(bucket, at);
    }

    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      next();
      return;
    }
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / tokensPerMs / 1000));
    res.setHeader("Retry-After", String(retryAfterSeconds));
    next(new AppError("rate_limited", `Too many requests; retry in ${retryAfterSeconds}s`));
  };
}
