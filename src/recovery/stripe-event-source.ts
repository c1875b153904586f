import type Stripe from "stripe";

/**
 * Every event type the webhook's intake acts on, as the webhook receives them: the checkout's, the
 * PaymentIntent's (a cancel or a decline at Stripe), money moving back (refunds), and what puts a
 * payment in doubt (disputes, Radar). A type the webhook handles but the sweep does not list is a
 * webhook Stripe may lose for good. Kept here rather than imported from the intake: the orders
 * domain reads recovery's constants, so recovery cannot import it back; a test checks the two agree.
 * Stripe's Events API takes at most 20 types per list.
 */
export const sweptEventTypes = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "checkout.session.async_payment_failed",
  "checkout.session.expired",
  "payment_intent.canceled",
  "payment_intent.payment_failed",
  "charge.refunded",
  "refund.created",
  "refund.updated",
  "refund.failed",
  "charge.dispute.created",
  "charge.dispute.updated",
  "charge.dispute.closed",
  "charge.dispute.funds_withdrawn",
  "charge.dispute.funds_reinstated",
  "review.opened",
  "review.closed",
  "radar.early_fraud_warning.created",
] as const satisfies readonly Stripe.Event.Type[];

export interface EventPage {
  events: Stripe.Event[];
  hasMore: boolean;
}

/** Stripe's Events API, one page at a time so each page can be a step of its own. */
export interface StripeEventSource {
  /** Events of the swept types created within [since, until], newest first, after `startingAfter`. */
  page(query: { since: Date; until: Date; startingAfter?: string }): Promise<EventPage>;
}

const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export function createStripeEventSource(stripe: Stripe, pageSize = 100): StripeEventSource {
  return {
    async page({ since, until, startingAfter }) {
      const list = await stripe.events.list({
        types: [...sweptEventTypes],
        created: { gte: seconds(since), lte: seconds(until) },
        limit: pageSize,
        ...(startingAfter ? { starting_after: startingAfter } : {}),
      });
      return { events: list.data, hasMore: list.has_more };
    },
  };
}
