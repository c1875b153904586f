import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

export const sweepStaleCheckoutsFunctionId = "sweep-stale-checkouts";
/**
 * Every 6 hours: the `checkout.session.expired` webhook releases an expired checkout's stock
 * itself, and sweep-missed-webhooks recovers that webhook when it went missing; this sweep is the
 * last net (a checkout half-made by a crash). Every 5 minutes it cost 25,920 Inngest executions a
 * month with no orders (docs/decisions/0190-idle-crons-become-events.md).
 */
export const sweepStaleCheckoutsCron = "35 */6 * * *";

/**
 * Finishes what checkout and the webhooks left undone (src/orders/checkout/checkout-sweep.ts):
 * half-made checkouts (an order whose Checkout Session was never recorded) are expired at Stripe
 * and here, and stock held for a checkout that can no longer be paid goes back on the shelf. Each
 * step re-checks every decision when it takes it, so a retried step changes nothing twice.
 */
export function createSweepStaleCheckouts(inngest: Inngest, deps: WorkflowDependencies) {
  const { checkouts } = deps.recovery;
  return inngest.createFunction(
    {
      id: sweepStaleCheckoutsFunctionId,
      name: "Expire half-made checkouts and release stale stock holds",
      triggers: [{ cron: sweepStaleCheckoutsCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step }) => {
      const halfMade = await step.run("expire-half-made-checkouts", () =>
        checkouts.expireHalfMadeOrders(new Date()),
      );
      const holds = await step.run("release-stale-holds", () => checkouts.releaseStaleHolds(new Date()));
      return { halfMade, holds };
    },
  );
}
