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
}

/**
 * Tells ops that something needs a human. Delivery is best effort: an alert that cannot be delivered
 * is logged and never thrown, so it can never turn a failure handler into a second failure.
 */
export interface Alerter {
  runFailed(failure: RunFailure): Promise<void>;
  notify(notice: OpsNotice): Promise<void>;
}

/** Told how each alert went, for metrics: `logged` means no Slack is configured (development). */
export type AlertDeliveryObserver = (
  kind: "run-failed" | "notice",
  outcome: "sent" | "failed" | "logged",
) => void;

export function runUrl(template: string, runId: string): string {
  return template.replaceAll("{runId}", encodeURIComponent(runId));
}
