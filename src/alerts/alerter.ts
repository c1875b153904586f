/** A workflow run that failed for good (Inngest's inngest/function.failed, or an onFailure handler). */
export interface RunFailure {
  functionId: string;
  runId: string;
  orderId?: string;
  customerId?: string;
  error: { name: string; message: string };
}

/** Anything else ops must look at: an authorization about to expire, a shipped order cancelled. */
export interface OpsNotice {
  title: string;
  fields: Record<string, string | number | undefined>;
  /** When the notice concerns a run, its link is added. */
  runId?: string;
  /**
   * Names this alert: raising it again with the same key (a retried handler) keeps one. Without
   * it the key is derived from the title, fields and run, so an identical notice is kept once.
   */
  key?: string;
}

/**
 * Tells ops that something needs a human. With Slack the alert is kept in the database until Slack
 * took it (src/alerts/alert-outbox.ts); nothing is thrown, so an alert can never turn a failure
 * handler into a second failure.
 */
export interface Alerter {
  runFailed(failure: RunFailure): Promise<void>;
  notify(notice: OpsNotice): Promise<void>;
}

/** Told how each alert went, for metrics: `logged` means no Slack is configured (development). */
export type AlertKind = "run-failed" | "notice";

export type AlertDeliveryObserver = (kind: AlertKind, outcome: "sent" | "failed" | "logged") => void;

export function runUrl(template: string, runId: string): string {
  return template.replaceAll("{runId}", encodeURIComponent(runId));
}
