import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { OrderStatus } from "../generated/prisma/enums";

export type WebhookOutcome = "processed" | "duplicate" | "ignored" | "rejected" | "failed";
export type StepOutcome = "completed" | "retrying" | "failed";
export type EmailOutcome = "sent" | "already-sent" | "queued" | "undeliverable" | "failed";
export type AlertKind = "run-failed" | "notice";
/** `logged`: no Slack configured (development), the alert went to the log. */
export type AlertOutcome = "sent" | "failed" | "logged";

/**
 * The service's Prometheus metrics, on a registry of its own (never prom-client's global one) so
 * that two services in one process, as in tests, never share or double-register series.
 * Label values come from small closed sets: no order ids or e-mail addresses as labels.
 */
export interface Metrics {
  readonly registry: Registry;
  /** Called by the webhook intakes once per delivery, with how long handling it took. */
  observeWebhook(type: string, outcome: WebhookOutcome | (string & {}), seconds: number): void;
  observeOrderTransition(to: OrderStatus): void;
  observeStep(fn: string, step: string, outcome: StepOutcome): void;
  observeStepDuration(fn: string, step: string, seconds: number): void;
  observeEmail(template: string, outcome: EmailOutcome): void;
  observeAlert(kind: AlertKind, outcome: AlertOutcome): void;
  /** Ops alerts kept in the outbox and not yet taken by Slack. */
  setUndeliveredAlerts(count: number): void;
  /**
   * Where a checkout's shipping options came from with live rates on (decision 0203): `live`, or
   * the rate table and why (the carrier unavailable, or no live rate for the destination).
   */
  observeCheckoutShippingQuote(source: "live" | "table", fallback?: string): void;
}

export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const webhooks = new Counter({
    name: "webhooks_received_total",
    help: "Webhook deliveries received, by event type and outcome",
    labelNames: ["type", "outcome"] as const,
    registers: [registry],
  });
  const webhookDuration = new Histogram({
    name: "webhook_duration_seconds",
    help: "Time to handle one webhook delivery",
    labelNames: ["type"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const transitions = new Counter({
    name: "order_status_transitions_total",
    help: "Orders moved to a status",
    labelNames: ["to"] as const,
    registers: [registry],
  });
  const steps = new Counter({
    name: "workflow_steps_total",
    help: "Workflow step attempts, by function, step and outcome (retrying: failed, will be retried)",
    labelNames: ["function", "step", "outcome"] as const,
    registers: [registry],
  });
  const stepDuration = new Histogram({
    name: "workflow_step_duration_seconds",
    help: "Duration of one workflow step attempt",
    labelNames: ["function", "step"] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const emails = new Counter({
    name: "emails_total",
    help: "Customer e-mails by template and outcome",
    labelNames: ["template", "outcome"] as const,
    registers: [registry],
  });
  const alerts = new Counter({
    name: "alerts_total",
    help: "Ops alerts by kind and delivery outcome",
    labelNames: ["kind", "outcome"] as const,
    registers: [registry],
  });
  const shippingQuotes = new Counter({
    name: "checkout_shipping_quotes_total",
    help: "Checkouts with live carrier rates on, by where the shipping options came from (live, or the rate table and why)",
    labelNames: ["source", "fallback"] as const,
    registers: [registry],
  });
  const undeliveredAlerts = new Gauge({
    name: "alerts_undelivered",
    help: "Ops alerts kept in the outbox and not yet delivered to Slack (waiting to be grouped, or failing)",
    registers: [registry],
  });

  return {
    registry,
    observeWebhook(type, outcome, seconds) {
      webhooks.inc({ type, outcome });
      webhookDuration.observe({ type }, seconds);
    },
    observeOrderTransition(to) {
      transitions.inc({ to });
    },
    observeStep(fn, step, outcome) {
      steps.inc({ function: fn, step, outcome });
    },
    observeStepDuration(fn, step, seconds) {
      stepDuration.observe({ function: fn, step }, seconds);
    },
    observeCheckoutShippingQuote(source, fallback) {
      shippingQuotes.inc({ source, fallback: fallback ?? "none" });
    },
    observeEmail(template, outcome) {
      emails.inc({ template, outcome });
    },
    observeAlert(kind, outcome) {
      alerts.inc({ kind, outcome });
    },
    setUndeliveredAlerts(count) {
      undeliveredAlerts.set(count);
    },
  };
}

/** Seconds elapsed since a `process.hrtime.bigint()` reading. */
export function secondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}
