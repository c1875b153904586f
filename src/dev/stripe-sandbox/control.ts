import type Stripe from "stripe";
import type { Outcome, SandboxContext } from "./context";
import { customerOrigin } from "./context";
import type { CompletionOptions, CompletionOutcome } from "./checkout-sessions";
import {
  applyPromotionCode,
  completeCheckoutSession,
  expireCheckoutSession,
  retrieveCheckoutSession,
  settleAsyncPayment,
} from "./checkout-sessions";
import { amendCapture, closeDispute, closeReview, openDispute, openReview } from "./disputes";
import { retrieveEvent } from "./events";
import type { Params } from "./form";
import { createRefund } from "./refunds";
import {
  cancelPaymentIntent,
  expireAuthorization,
  expireLapsedAuthorizations,
  retrievePaymentIntent,
} from "./payment-intents";
import type { DeliveryResult, SignedDelivery, WebhookDeliverer } from "./webhook-delivery";

export interface ControlResult {
  checkoutSession?: Stripe.Checkout.Session;
  paymentIntent?: Stripe.PaymentIntent;
  /** The events the action recorded, oldest first. */
  events: Stripe.Event[];
  /** One entry per delivered event; empty with `deliver: false` or no webhook URL. */
  deliveries: DeliveryResult[];
}

export interface DeliverOption {
  /** Default true: POST the signed events to the webhook URL before returning. */
  deliver?: boolean;
}

export interface LapseResult {
  /** The PaymentIntents whose authorization lapsed in this run. */
  paymentIntents: Stripe.PaymentIntent[];
  events: Stripe.Event[];
  deliveries: DeliveryResult[];
}

/** The test-and-demo side of the sandbox: what customers, card networks and time do. */
export class SandboxControl {
  constructor(
    private readonly ctx: SandboxContext,
    private readonly deliverer: WebhookDeliverer,
  ) {}

  completeCheckoutSession(
    id: string,
    outcome: CompletionOutcome,
    options: DeliverOption & CompletionOptions = {},
  ): Promise<ControlResult> {
    return this.finish(completeCheckoutSession(this.ctx, id, outcome, options), options);
  }

  /** The customer types a promotion code on the page: `error` is what the page shows, null once applied. */
  applyPromotionCode(
    id: string,
    code: string,
  ): { checkoutSession: Stripe.Checkout.Session; error: string | null } {
    const outcome = applyPromotionCode(this.ctx, id, code);
    this.ctx.store.persist();
    return { checkoutSession: outcome.session, error: outcome.error };
  }

  settleAsyncPayment(id: string, succeeded: boolean, options: DeliverOption = {}): Promise<ControlResult> {
    return this.finish(settleAsyncPayment(this.ctx, id, succeeded), options);
  }

  expireCheckoutSession(id: string, options: DeliverOption = {}): Promise<ControlResult> {
    return this.finish(expireCheckoutSession(this.ctx, id, customerOrigin), options);
  }

  /** The authorization lapsed before capture (about seven days for cards). */
  expireAuthorization(paymentIntentId: string, options: DeliverOption = {}): Promise<ControlResult> {
    return this.finish(expireAuthorization(this.ctx, paymentIntentId, customerOrigin), options);
  }

  /**
   * Stripe's expiry run: authorizations whose window has passed on the sandbox clock lapse
   * (PaymentIntent canceled, `cancellation_reason: "expired"`, `charge.expired` and
   * `payment_intent.canceled` delivered).
   */
  async expireLapsedAuthorizations(options: DeliverOption = {}): Promise<LapseResult> {
    const outcome = expireLapsedAuthorizations(this.ctx, customerOrigin);
    this.ctx.store.persist();
    return {
      paymentIntents: outcome.result,
      events: outcome.events,
      deliveries: await this.deliverAll(outcome.events, options),
    };
  }

  /** Someone voided the authorization outside this service (the Dashboard, say). */
  cancelAuthorization(paymentIntentId: string, options: DeliverOption = {}): Promise<ControlResult> {
    return this.finish(cancelPaymentIntent(this.ctx, paymentIntentId, {}, customerOrigin), options);
  }

  /**
   * A refund made outside this service (the Dashboard, another system): the same refund as the
   * API's, with its `refund.created` and `charge.refunded` events; `deliver: false` loses them.
   */
  async refund(
    fields: { paymentIntent: string; amount?: number; reason?: string },
    options: DeliverOption = {},
  ): Promise<{ refund: Stripe.Refund; events: Stripe.Event[]; deliveries: DeliveryResult[] }> {
    const params: Params = { payment_intent: fields.paymentIntent };
    if (fields.amount !== undefined) params.amount = String(fields.amount);
    if (fields.reason !== undefined) params.reason = fields.reason;
    const outcome = createRefund(this.ctx, params, customerOrigin);
    this.ctx.store.persist();
    return {
      refund: outcome.result,
      events: outcome.events,
      deliveries: await this.deliverAll(outcome.events, options),
    };
  }

  /** The cardholder disputes the charge (what Stripe's dispute test cards do). */
  async dispute(
    fields: { paymentIntent: string; reason?: string; amount?: number },
    options: DeliverOption = {},
  ): Promise<{ dispute: Stripe.Dispute; events: Stripe.Event[]; deliveries: DeliveryResult[] }> {
    const outcome = openDispute(this.ctx, fields.paymentIntent, fields, customerOrigin);
    this.ctx.store.persist();
    return {
      dispute: outcome.result,
      events: outcome.events,
      deliveries: await this.deliverAll(outcome.events, options),
    };
  }

  /** The card network decides the dispute: won (the money comes back) or lost. */
  async closeDispute(
    disputeId: string,
    outcome: "won" | "lost",
    options: DeliverOption = {},
  ): Promise<{ dispute: Stripe.Dispute; events: Stripe.Event[]; deliveries: DeliveryResult[] }> {
    const closed = closeDispute(this.ctx, disputeId, outcome, customerOrigin);
    this.ctx.store.persist();
    return {
      dispute: closed.result,
      events: closed.events,
      deliveries: await this.deliverAll(closed.events, options),
    };
  }

  /** Radar opens a review of the payment. */
  async openReview(
    paymentIntentId: string,
    options: DeliverOption = {},
  ): Promise<{ review: Stripe.Review; events: Stripe.Event[]; deliveries: DeliveryResult[] }> {
    const outcome = openReview(this.ctx, paymentIntentId, customerOrigin);
    this.ctx.store.persist();
    return {
      review: outcome.result,
      events: outcome.events,
      deliveries: await this.deliverAll(outcome.events, options),
    };
  }

  /** Ops close the review in the Dashboard. */
  async closeReview(
    reviewId: string,
    closedReason: Stripe.Review.ClosedReason,
    options: DeliverOption = {},
  ): Promise<{ review: Stripe.Review; events: Stripe.Event[]; deliveries: DeliveryResult[] }> {
    const outcome = closeReview(this.ctx, reviewId, closedReason, customerOrigin);
    this.ctx.store.persist();
    return {
      review: outcome.result,
      events: outcome.events,
      deliveries: await this.deliverAll(outcome.events, options),
    };
  }

  /** See amendCapture: Stripe's record of a capture now differs from ours. */
  amendCapture(paymentIntentId: string, amount: number): Stripe.Charge {
    const charge = amendCapture(this.ctx, paymentIntentId, amount);
    this.ctx.store.persist();
    return charge;
  }

  /** Delivers an event again, freshly signed, whatever happened before (Stripe's "Resend"). */
  redeliver(eventId: string): Promise<DeliveryResult> {
    return this.deliverer.deliver(retrieveEvent(this.ctx, eventId));
  }

  signedDelivery(eventId: string): SignedDelivery {
    return this.deliverer.sign(retrieveEvent(this.ctx, eventId));
  }

  private async deliverAll(events: Stripe.Event[], options: DeliverOption): Promise<DeliveryResult[]> {
    const deliveries: DeliveryResult[] = [];
    if (options.deliver === false) return deliveries;
    for (const event of events) {
      if (this.deliverer.wants(event)) deliveries.push(await this.deliverer.deliver(event));
    }
    return deliveries;
  }

  private async finish(
    outcome: Outcome<Stripe.Checkout.Session | Stripe.PaymentIntent>,
    options: DeliverOption,
  ): Promise<ControlResult> {
    this.ctx.store.persist();
    const deliveries = await this.deliverAll(outcome.events, options);
    const object = outcome.result;
    if (object.object === "checkout.session") {
      const session = retrieveCheckoutSession(this.ctx, object.id);
      const paymentIntent =
        typeof session.payment_intent === "string"
          ? retrievePaymentIntent(this.ctx, session.payment_intent)
          : undefined;
      return {
        checkoutSession: session,
        ...(paymentIntent ? { paymentIntent } : {}),
        events: outcome.events,
        deliveries,
      };
    }
    return { paymentIntent: object, events: outcome.events, deliveries };
  }
}
