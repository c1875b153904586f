export { createMetrics, secondsSince, type Metrics } from "./metrics";
export { metricsRoute } from "./metrics-route";
export { observedEmailSender } from "./observed-email-sender";
export { workflowObservability } from "./workflow-observability";
