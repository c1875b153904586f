import type Stripe from "stripe";

/** The events the intake turns into order transitions, as the webhook receives them. */
export const sweptEventTypes = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "checkout.session.async_payment_failed",
  "checkout.session.expired",
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
