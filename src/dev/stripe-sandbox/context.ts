import type Stripe from "stripe";
import type { SandboxStore } from "./store";

/** Who caused a change: an API request (its id and idempotency key) or the "customer" (both null). */
export interface Origin {
  requestId: string | null;
  idempotencyKey: string | null;
}

export const customerOrigin: Origin = { requestId: null, idempotencyKey: null };

export interface SandboxContext {
  store: SandboxStore;
  /** Milliseconds since the epoch on the sandbox clock (see StripeSandbox.advanceClock). */
  now(): number;
  /** How long a card authorization can be captured (Stripe: about seven days). */
  authorizationWindowMs: number;
  /** Where this sandbox answers, for the hosted-page URL of a Checkout Session. */
  baseUrl(): string;
  /** How many webhook endpoints will receive a new event (Stripe's `pending_webhooks`). */
  webhookEndpointCount(): number;
  /** The account's business name, which Stripe's Checkout page shows its customers. */
  businessName: string;
}

/** The result of an operation plus the events it recorded, in order. */
export interface Outcome<T> {
  result: T;
  events: Stripe.Event[];
}

export const unixSeconds = (ms: number): number => Math.floor(ms / 1000);
