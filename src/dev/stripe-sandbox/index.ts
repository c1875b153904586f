import { listenOn } from "../listen";
import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import express, { type Express, type Response } from "express";
import type Stripe from "stripe";
import type { Logger } from "../../logger";
import { createApiRouter, type RequestLogEntry } from "./api-router";
import type { CompletionOptions, CompletionOutcome, CustomerShipping } from "./checkout-sessions";
import type { SandboxContext } from "./context";
import { SandboxControl, type ControlResult, type DeliverOption, type LapseResult } from "./control";
import { createControlRouter } from "./control-router";
import type { DeclineCode } from "./errors";
import { FailureInjector, type InjectedFailure, type SandboxEndpoint } from "./failures";
import { IdempotencyKeys } from "./idempotency";
import { createPayPage, standInHome } from "./pay-page";
import { SandboxStore } from "./store";
import { WebhookDeliverer, type DeliveryResult, type SignedDelivery } from "./webhook-delivery";

export type {
  CompletionOptions,
  CompletionOutcome,
  CustomerShipping,
  ControlResult,
  DeclineCode,
  DeliveryResult,
  InjectedFailure,
  LapseResult,
  RequestLogEntry,
  SandboxEndpoint,
  SignedDelivery,
};

export interface StripeSandboxOptions {
  /** Where to POST signed events (the service's /api/stripe/webhook); settable later. */
  webhookUrl?: string;
  webhookSecret: string;
  logger: Logger;
  /** Keep state across restarts in this JSON file (written through on every change). */
  stateFile?: string;
  /**
   * Base clock in ms; default Date.now. The sandbox clock is this plus whatever advanceClock added;
   * it dates objects and events and decides when authorizations lapse. Webhook signatures use the
   * base clock, since the receiver checks them against its own.
   */
  now?: () => number;
  /** The business name the pay page shows, as Stripe shows the account's (SHOP_NAME); default "Shop". */
  businessName?: string;
  /** How long a card authorization stays capturable. Default 7 days, Stripe's usual window. */
  authorizationWindowMs?: number;
  /**
   * While listening, run Stripe's expiry of lapsed authorizations this often (a long-running
   * `npm start` whose state file outlives the window). Default: never on its own; tests call
   * advanceClock / expireLapsedAuthorizations so that nothing lapses behind their back.
   */
  expiryIntervalMs?: number;
  /** Which event types reach the webhook URL, like a Stripe endpoint's enabled_events. Default: all. */
  enabledEvents?: string[];
  /**
   * Automatic redelivery after a failed attempt, with these delays: Stripe's schedule (up to
   * three days) compressed for local use. Default 0.5 s, 1 s, 2 s, 5 s, 10 s, 30 s; [] for none.
   */
  retryDelaysMs?: number[];
  /** Delivery timeout. Default 10 s. */
  deliveryTimeoutMs?: number;
}

export interface StripeSandbox {
  app: Express;
  listen(port: number, host?: string): Promise<{ url: string }>;
  close(): Promise<void>;
  /** http://host:port once listening. */
  readonly url: string | undefined;
  setWebhookUrl(url: string | undefined): void;

  injectFailure(endpoint: SandboxEndpoint, failure: InjectedFailure, times?: number): void;
  clearFailures(): void;

  completeCheckoutSession(
    id: string,
    outcome: CompletionOutcome,
    options?: DeliverOption & CompletionOptions,
  ): Promise<ControlResult>;
  /** The customer types a promotion code on the hosted page; `error` is the page's message, null once applied. */
  applyPromotionCode(
    id: string,
    code: string,
  ): { checkoutSession: Stripe.Checkout.Session; error: string | null };
  settleAsyncPayment(id: string, succeeded: boolean, options?: DeliverOption): Promise<ControlResult>;
  expireCheckoutSession(id: string, options?: DeliverOption): Promise<ControlResult>;
  expireAuthorization(paymentIntentId: string, options?: DeliverOption): Promise<ControlResult>;
  cancelAuthorization(paymentIntentId: string, options?: DeliverOption): Promise<ControlResult>;
  /**
   * Moves the sandbox clock forward (time passing at Stripe) and, unless `expire: false`, runs
   * Stripe's expiry of lapsed authorizations. With `expire: false` a lapsed authorization still
   * reads `requires_capture` and a capture fails with `capture_charge_authorization_expired`.
   */
  advanceClock(ms: number, options?: DeliverOption & { expire?: boolean }): Promise<LapseResult>;
  /** Runs Stripe's expiry of lapsed authorizations now. */
  expireLapsedAuthorizations(options?: DeliverOption): Promise<LapseResult>;
  /** The sandbox clock (ms) and how far advanceClock has moved it. */
  clock(): { now: number; advancedMs: number; authorizationWindowMs: number };
  /** A refund made outside this service (the Dashboard); `deliver: false` loses its webhooks. */
  refund(
    fields: { paymentIntent: string; amount?: number; reason?: string },
    options?: DeliverOption,
  ): Promise<{ refund: Stripe.Refund; events: Stripe.Event[]; deliveries: DeliveryResult[] }>;
  /** The cardholder disputes the charge. */
  dispute(
    fields: { paymentIntent: string; reason?: string; amount?: number },
    options?: DeliverOption,
  ): Promise<{ dispute: Stripe.Dispute; events: Stripe.Event[]; deliveries: DeliveryResult[] }>;
  /** The dispute is decided (`charge.dispute.funds_reinstated` when won, `charge.dispute.closed`). */
  closeDispute(
    disputeId: string,
    outcome: "won" | "lost",
    options?: DeliverOption,
  ): Promise<{ dispute: Stripe.Dispute; events: Stripe.Event[]; deliveries: DeliveryResult[] }>;
  /** Radar opens a review of the payment (`review.opened`). */
  openReview(
    paymentIntentId: string,
    options?: DeliverOption,
  ): Promise<{ review: Stripe.Review; events: Stripe.Event[]; deliveries: DeliveryResult[] }>;
  /** The review is closed (`review.closed`) as approved or refunded. */
  closeReview(
    reviewId: string,
    closedReason: Stripe.Review.ClosedReason,
    options?: DeliverOption,
  ): Promise<{ review: Stripe.Review; events: Stripe.Event[]; deliveries: DeliveryResult[] }>;
  /** Test fixture: Stripe's captured amount (and its balance transaction) now reads `amount`. */
  amendCapture(paymentIntentId: string, amount: number): Stripe.Charge;
  /** The next `times` deliveries of events matching `type` are lost for good (no retry). */
  dropDeliveries(type: string, times?: number): void;
  /** Delivers a recorded event again, freshly signed. */
  redeliver(eventId: string): Promise<DeliveryResult>;
  /** The exact body and Stripe-Signature header a delivery of this event would carry now. */
  signedDelivery(eventId: string): SignedDelivery;
  /** Resolves when the webhook deliveries queued by API calls so far have been attempted. */
  deliveriesSettled(): Promise<void>;

  checkoutSession(id: string): Stripe.Checkout.Session | undefined;
  paymentIntent(id: string): Stripe.PaymentIntent | undefined;
  /** Every recorded event, oldest first. */
  events(type?: string): Stripe.Event[];
  /** Every API call, in arrival order (endpoint, params, idempotency key, status). */
  readonly requests: readonly RequestLogEntry[];
  readonly deliveries: readonly DeliveryResult[];
}

const defaultRetryDelaysMs = [500, 1_000, 2_000, 5_000, 10_000, 30_000];
const defaultAuthorizationWindowMs = 7 * 24 * 3600_000;

/** A webhook signing secret for the embedded sandbox when STRIPE_WEBHOOK_SECRET is unset. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64url")}`;
}

/**
 * A local stand-in for the parts of Stripe's API this service uses, spoken to by stripe-node
 * over HTTP (`STRIPE_API_BASE`), plus `/_sandbox` control routes that play the customer.
 */
export function createStripeSandbox(options: StripeSandboxOptions): StripeSandbox {
  const logger = options.logger.child({ component: "stripe-stand-in" });
  const store = new SandboxStore(options.stateFile);
  const baseNow = options.now ?? Date.now;
  const now = (): number => baseNow() + store.data.clockAdvancedMs;
  const authorizationWindowMs = options.authorizationWindowMs ?? defaultAuthorizationWindowMs;
  let expiryTimer: NodeJS.Timeout | undefined;
  let url: string | undefined;
  let server: Server | undefined;

  const deliverer = new WebhookDeliverer({
    secret: options.webhookSecret,
    logger,
    now: baseNow,
    enabledEvents: options.enabledEvents ?? ["*"],
    retryDelaysMs: options.retryDelaysMs ?? defaultRetryDelaysMs,
    timeoutMs: options.deliveryTimeoutMs ?? 10_000,
  });
  deliverer.setUrl(options.webhookUrl);

  const ctx: SandboxContext = {
    store,
    now,
    authorizationWindowMs,
    baseUrl: () => url ?? "http://127.0.0.1",
    webhookEndpointCount: () => (deliverer.hasEndpoint() ? 1 : 0),
    businessName: options.businessName ?? "Shop",
  };
  const failures = new FailureInjector();
  const control = new SandboxControl(ctx, deliverer);
  const requests: RequestLogEntry[] = [];
  const hanging = new Set<Response>();

  const app = express();
  app.disable("x-powered-by");
  app.use(
    "/v1",
    createApiRouter({
      ctx,
      failures,
      idempotency: new IdempotencyKeys(store, now),
      requestLog: requests,
      onEvents: (events) => deliverer.deliverInBackground(events),
      hanging,
    }),
  );
  app.get("/", standInHome(ctx));
  app.use("/_sandbox/pay", createPayPage({ ctx, control }));
  const advanceClock = async (
    ms: number,
    opts: DeliverOption & { expire?: boolean } = {},
  ): Promise<LapseResult> => {
    if (!Number.isFinite(ms) || ms < 0)
      throw new Error(`The sandbox clock only moves forward, not by ${ms} ms`);
    store.data.clockAdvancedMs += ms;
    store.persist();
    if (opts.expire === false) return { paymentIntents: [], events: [], deliveries: [] };
    return control.expireLapsedAuthorizations(opts);
  };
  const clock = () => ({ now: now(), advancedMs: store.data.clockAdvancedMs, authorizationWindowMs });
  app.use("/_sandbox", createControlRouter({ control, failures, deliverer, advanceClock, clock }));

  return {
    app,
    get url() {
      return url;
    },
    async listen(port, host = "127.0.0.1") {
      ({ server, url } = await listenOn(app, port, host));
      logger.info({ url }, "Stripe stand-in listening");
      if (options.expiryIntervalMs !== undefined && !expiryTimer) {
        expiryTimer = setInterval(() => {
          control.expireLapsedAuthorizations().catch((error: unknown) => {
            logger.warn({ err: error }, "Stripe sandbox: expiring lapsed authorizations failed");
          });
        }, options.expiryIntervalMs);
        expiryTimer.unref();
      }
      return { url };
    },
    async close() {
      clearInterval(expiryTimer);
      expiryTimer = undefined;
      deliverer.close();
      for (const res of hanging) res.destroy();
      hanging.clear();
      store.persist();
      if (server) {
        const closing = server;
        server = undefined;
        closing.closeIdleConnections();
        await new Promise<void>((resolve, reject) =>
          closing.close((error) => (error ? reject(error) : resolve())),
        );
      }
    },
    setWebhookUrl: (webhookUrl) => deliverer.setUrl(webhookUrl),
    injectFailure: (endpoint, failure, times) => failures.inject(endpoint, failure, times),
    clearFailures: () => failures.clear(),
    completeCheckoutSession: (id, outcome, opts) => control.completeCheckoutSession(id, outcome, opts),
    applyPromotionCode: (id, code) => control.applyPromotionCode(id, code),
    settleAsyncPayment: (id, succeeded, opts) => control.settleAsyncPayment(id, succeeded, opts),
    expireCheckoutSession: (id, opts) => control.expireCheckoutSession(id, opts),
    expireAuthorization: (id, opts) => control.expireAuthorization(id, opts),
    cancelAuthorization: (id, opts) => control.cancelAuthorization(id, opts),
    advanceClock,
    expireLapsedAuthorizations: (opts) => control.expireLapsedAuthorizations(opts),
    clock,
    refund: (fields, opts) => control.refund(fields, opts),
    dispute: (fields, opts) => control.dispute(fields, opts),
    closeDispute: (id, outcome, opts) => control.closeDispute(id, outcome, opts),
    amendCapture: (id, amount) => control.amendCapture(id, amount),
    openReview: (id, opts) => control.openReview(id, opts),
    closeReview: (id, reason, opts) => control.closeReview(id, reason, opts),
    dropDeliveries: (type, times = 1) => deliverer.drop(type, times),
    redeliver: (eventId) => control.redeliver(eventId),
    signedDelivery: (eventId) => control.signedDelivery(eventId),
    deliveriesSettled: () => deliverer.idle(),
    checkoutSession: (id) => store.data.checkoutSessions[id],
    paymentIntent: (id) => store.data.paymentIntents[id],
    events: (type) => store.data.events.filter((event) => type === undefined || event.type === type),
    requests,
    deliveries: deliverer.results,
  };
}
