import type { Logger } from "../logger";
import { runUrl, type Alerter } from "./alerter";

/** Without SLACK_WEBHOOK_URL (outside production), alerts land in the log at error level. */
export function createLogAlerter(options: { runUrlTemplate: string; logger: Logger }): Alerter {
  const { runUrlTemplate, logger } = options;
  return {
    async runFailed(failure) {
      logger.error(
        { alert: { ...failure, runUrl: runUrl(runUrlTemplate, failure.runId) } },
        `ALERT run failed: ${failure.functionId}`,
      );
    },
    async notify(notice) {
      const link = notice.runId === undefined ? {} : { runUrl: runUrl(runUrlTemplate, notice.runId) };
      logger.error({ alert: { ...notice, ...link } }, `ALERT ${notice.title}`);
    },
  };
}
