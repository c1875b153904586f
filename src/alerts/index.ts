export { runUrl, type AlertDeliveryObserver, type Alerter, type OpsNotice, type RunFailure } from "./alerter";
export { createAlerter, defaultRunUrlTemplate } from "./create-alerter";
export { createLogAlerter } from "./log-alerter";
export { createSlackAlerter } from "./slack-alerter";
