import { createHash } from "node:crypto";
import { runUrl, type Alerter, type OpsNotice } from "./alerter";
import type { AlertOutbox } from "./alert-outbox";
import { noticeContent, runFailedContent } from "./slack-message";

/** A notice's key when its caller gave none: the same title, fields and run are the same alert. */
function noticeKey(notice: OpsNotice): string {
  if (notice.key !== undefined) return `notice-${notice.key}`;
  const fields = Object.entries(notice.fields).sort(([a], [b]) => a.localeCompare(b));
  const digest = createHash("sha256")
    .update(JSON.stringify([notice.title, fields, notice.runId ?? null]))
    .digest("hex");
  return `notice-${digest.slice(0, 32)}`;
}

/**
 * The alerter with Slack: each alert is put in the outbox under its key (a run's failure once per
 * run, however often its failure handler runs) and grouped with its kind: a function's failures,
 * or one title of notice.
 */
export function createDurableAlerter(options: {
  outbox: AlertOutbox;
  runUrlTemplate: string;
  orderUrl?: (orderId: string) => string;
}): Alerter {
  const { outbox, runUrlTemplate } = options;
  return {
    runFailed(failure) {
      const orderLink = failure.orderId && options.orderUrl ? options.orderUrl(failure.orderId) : undefined;
      return outbox.enqueue({
        key: `run-failed-${failure.runId}`,
        group: `run-failed:${failure.functionId}`,
        content: runFailedContent(failure, runUrl(runUrlTemplate, failure.runId), orderLink),
      });
    },
    notify(notice) {
      const link = notice.runId === undefined ? undefined : runUrl(runUrlTemplate, notice.runId);
      return outbox.enqueue({
        key: noticeKey(notice),
        group: `notice:${notice.title}`,
        content: noticeContent(notice, link),
      });
    },
  };
}
