import type { CaptureFailureCode, DeclineCode } from "./errors";

export const sandboxEndpoints = [
  "checkout.sessions.create",
  "checkout.sessions.retrieve",
  "checkout.sessions.expire",
  "checkout.sessions.line_items",
  "payment_intents.create",
  "payment_intents.retrieve",
  "payment_intents.capture",
  "payment_intents.cancel",
  "refunds.create",
  "refunds.retrieve",
  "events.list",
  "events.retrieve",
  "refunds.list",
  "balance_transactions.list",
  "disputes.list",
  "disputes.retrieve",
  "coupons.create",
  "coupons.retrieve",
  "promotion_codes.create",
  "promotion_codes.retrieve",
  "promotion_codes.list",
  "shipping_rates.create",
  "shipping_rates.retrieve",
] as const;

export type SandboxEndpoint = (typeof sandboxEndpoints)[number];

/**
 * What an injected failure does to the next call(s) of an endpoint:
 * - `server_error`: 500 `api_error` before anything executes (like a failing Stripe edge), nothing saved;
 * - `rate_limited`: 429 before anything executes;
 * - `decline`: 402 `card_error` (`card_declined`, `authentication_required`, ...), saved under the
 *   idempotency key like any executed request; at capture only `card_declined` (see inject). On
 *   `payment_intents.create` (an off-session charge) the PaymentIntent is created and its payment
 *   fails as Stripe's does: the error carries it, `requires_payment_method`, with its failed charge;
 * - `capture_failure` (capture only): 400 `invalid_request_error` with the code Stripe gives a
 *   capture that cannot happen (`charge_expired_for_capture`, ...; see CaptureFailureCode), saved
 *   like `decline`. The PaymentIntent's state is left alone: to model the lapse itself, move the
 *   sandbox clock past the authorization window instead (StripeSandbox.advanceClock);
 * - `hang`: no answer, so the client's timeout fires. `afterProcessing: true` executes the request
 *   first (the change happens, the answer is lost: a retry with the same key replays it);
 *   `ms` answers normally after that delay instead of never; `until` answers once that promise settles
 *   (tests use it to land something else, a cancel say, exactly while the call is in flight).
 */
export type InjectedFailure =
  | { kind: "server_error" }
  | { kind: "rate_limited" }
  | { kind: "decline"; code?: DeclineCode }
  | { kind: "capture_failure"; code: CaptureFailureCode }
  | { kind: "hang"; ms?: number; afterProcessing?: boolean; until?: Promise<unknown> };

interface Rule {
  endpoint: SandboxEndpoint;
  failure: InjectedFailure;
  remaining: number;
}

export class FailureInjector {
  private rules: Rule[] = [];

  inject(endpoint: SandboxEndpoint, failure: InjectedFailure, times = 1): void {
    if (!sandboxEndpoints.includes(endpoint)) throw new Error(`Unknown sandbox endpoint: ${endpoint}`);
    if (failure.kind === "capture_failure" && endpoint !== "payment_intents.capture")
      throw new Error(`A capture_failure can be injected into payment_intents.capture only, not ${endpoint}`);
    // The issuer approved the hold at authorization; all a capture can still meet is a plain
    // card_declined. Authentication, funds and card expiry are decided at authorization, on the
    // hosted page (completeCheckoutSession "declined"), and an expired hold is a capture_failure.
    if (
      failure.kind === "decline" &&
      endpoint === "payment_intents.capture" &&
      (failure.code ?? "card_declined") !== "card_declined"
    ) {
      throw new Error(
        `Stripe does not answer a capture with ${failure.code}: inject card_declined, or a capture_failure`,
      );
    }
    if (!Number.isInteger(times) || times < 1)
      throw new Error(`times must be a positive integer, got ${times}`);
    this.rules.push({ endpoint, failure, remaining: times });
  }

  /** Consumes one use of the oldest rule for this endpoint. */
  take(endpoint: SandboxEndpoint): InjectedFailure | undefined {
    const rule = this.rules.find((candidate) => candidate.endpoint === endpoint);
    if (!rule) return undefined;
    rule.remaining -= 1;
    if (rule.remaining === 0) this.rules = this.rules.filter((candidate) => candidate !== rule);
    return rule.failure;
  }

  pending(): { endpoint: SandboxEndpoint; failure: InjectedFailure; remaining: number }[] {
    return this.rules.map((rule) => ({ ...rule }));
  }

  clear(): void {
    this.rules = [];
  }
}
