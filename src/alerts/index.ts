export {
  runUrl,
  type AlertDeliveryObserver,
  type AlertKind,
  type Alerter,
  type OpsNotice,
  type RunFailure,
} from "./alerter";
export {
  createAlertOutbox,
  defaultAlertRetryPolicy,
  type AlertBacklog,
  type AlertDrainResult,
  type AlertOutbox,
  type OutgoingAlert,
} from "./alert-outbox";
export { createAlerter, defaultRunUrlTemplate } from "./create-alerter";
export { createDurableAlerter } from "./durable-alerter";
export { createLogAlerter } from "./log-alerter";
