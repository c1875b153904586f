import type Stripe from "stripe";
import type { Database } from "../db/client";
import { createRecoveryCheckpoints } from "./checkpoints";
import { createExpiringAuthorizations } from "./expiring-authorizations";
import { createStalledOrders } from "./stalled-orders";
import { createStripeEventSource } from "./stripe-event-source";

/** What the recovery crons read of the database and of Stripe (src/inngest/functions/recover-*, sweep-*). */
export function createRecoveryModule(db: Database, stripe: Stripe) {
  return {
    stalledOrders: createStalledOrders(db),
    expiringAuthorizations: createExpiringAuthorizations(db),
    checkpoints: createRecoveryCheckpoints(db),
    stripeEvents: createStripeEventSource(stripe),
  };
}
