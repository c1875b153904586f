export { createRecoveryCheckpoints, type RecoveryCheckpoints } from "./checkpoints";
export {
  authorizationLifetimeMs,
  createExpiringAuthorizations,
  type ExpiringAuthorization,
  type ExpiringAuthorizations,
} from "./expiring-authorizations";
export { createStalledOrders, type StalledOrders } from "./stalled-orders";
export { createStripeEventSource, sweptEventTypes, type StripeEventSource } from "./stripe-event-source";
