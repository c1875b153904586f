import type { StockHolds } from "../../inventory/stock-holds";
import type { Logger } from "../../logger";
import type { CheckoutSessions } from "../../payments/stripe-checkout";
import type { CheckoutRepository } from "./checkout-repository";
import type { CheckoutService } from "./checkout-service";

/** A checkout request still running is younger than this (Stripe's client times out at 8 s). */
export const halfMadeGraceMs = 2 * 60_000;
/** Stripe expires a session shortly after its expires_at and then sends checkout.session.expired. */
export const expiryGraceMs = 5 * 60_000;
const batch = 100;

export interface SweepCounts {
  expired: number;
  released: number;
  kept: number;
  failed: number;
}

/**
 * What the checkout sweep (src/inngest/functions/sweep-stale-checkouts.ts) does, as two
 * idempotent passes: each decision is re-checked against the database or Stripe when taken, so a
 * repeated or concurrent pass changes nothing twice.
 */
export interface CheckoutSweep {
  /** Pending orders whose Checkout Session never got attached: expire session, order and hold. */
  expireHalfMadeOrders(now: Date): Promise<SweepCounts>;
  /**
   * Holds that outlived their checkout: the order expired, failed or was cancelled (a release
   * that did not happen), or it is still pending after its session's expires_at (the
   * `checkout.session.expired` webhook was missed). Stripe is asked before a pending order is
   * given up: a session that was completed keeps its hold, since the payment is real and the
   * Events API sweep will record it.
   */
  releaseStaleHolds(now: Date): Promise<SweepCounts>;
}

export function createCheckoutSweep(deps: {
  orders: CheckoutRepository;
  checkout: Pick<CheckoutService, "expireHalfMade">;
  holds: StockHolds;
  sessions: Pick<CheckoutSessions, "status">;
  logger: Logger;
}): CheckoutSweep {
  const logger = deps.logger.child({ component: "checkout-sweep" });
  const empty = (): SweepCounts => ({ expired: 0, released: 0, kept: 0, failed: 0 });

  return {
    async expireHalfMadeOrders(now) {
      const counts = empty();
      for (const orderId of await deps.orders.findHalfMade(
        new Date(now.getTime() - halfMadeGraceMs),
        batch,
      )) {
        try {
          const outcome = await deps.checkout.expireHalfMade(orderId);
          if (outcome === "expired") {
            counts.expired += 1;
            logger.warn({ orderId }, "half-made checkout expired (its session was never recorded)");
          } else counts.kept += 1;
        } catch (error) {
          counts.failed += 1;
          logger.error({ err: error, orderId }, "could not expire a half-made checkout; next sweep retries");
        }
      }
      return counts;
    },

    async releaseStaleHolds(now) {
      const counts = empty();
      const stale = await deps.holds.findStale({
        expiredBefore: new Date(now.getTime() - expiryGraceMs),
        limit: batch,
      });
      for (const hold of stale) {
        try {
          if (hold.status !== "pending") {
            const released = await deps.holds.release(hold.orderId, `order is ${hold.status}`);
            if (released.length > 0) counts.released += 1;
            continue;
          }
          if (hold.checkoutSessionId === null) {
            counts.kept += 1; // Half-made: the other pass expires it, releasing the hold.
            continue;
          }
          const status = await deps.sessions.status(hold.checkoutSessionId);
          if (status !== "expired") {
            counts.kept += 1;
            if (status === "complete")
              logger.warn({ orderId: hold.orderId }, "paid session still pending here; hold kept");
            continue;
          }
          await deps.orders.abandon(hold.orderId, "Checkout Session expired (webhook not seen)");
          counts.expired += 1;
          logger.warn({ orderId: hold.orderId }, "hold released: its Checkout Session expired unseen");
        } catch (error) {
          counts.failed += 1;
          logger.error(
            { err: error, orderId: hold.orderId },
            "could not settle a stale hold; next sweep retries",
          );
        }
      }
      return counts;
    },
  };
}
