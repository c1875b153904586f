import { createHash } from "node:crypto";
import { stripeErrors } from "./errors";
import type { Params } from "./form";
import type { IdempotencyRecord, SandboxStore } from "./store";

/** Stripe keeps idempotency keys for at least 24 hours. */
const keyLifetimeMs = 24 * 60 * 60 * 1000;

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export function fingerprint(params: Params): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(params)))
    .digest("hex");
}

/**
 * Stripe's idempotency layer for POST requests: the first result for a key is saved (errors
 * from an executed request included) and replayed for the same route and parameters; the same
 * key with other parameters or on another route is refused with `idempotency_error`.
 */
export class IdempotencyKeys {
  constructor(
    private readonly store: SandboxStore,
    private readonly now: () => number,
  ) {}

  /** The saved result to replay, or undefined when the request must execute. */
  lookup(key: string, route: string, params: Params): IdempotencyRecord | undefined {
    const record = this.store.data.idempotency[key];
    if (!record) return undefined;
    // An expired key executes afresh; save() then overwrites the old record.
    if (this.now() - record.createdAt > keyLifetimeMs) return undefined;
    if (record.route !== route || record.fingerprint !== fingerprint(params)) {
      throw stripeErrors.idempotencyMismatch(key);
    }
    return record;
  }

  save(key: string, route: string, params: Params, status: number, body: unknown): void {
    this.store.data.idempotency[key] = {
      route,
      fingerprint: fingerprint(params),
      status,
      body,
      createdAt: this.now(),
    };
  }
}
