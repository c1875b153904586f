import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

export const alertExpiringAuthorizationsFunctionId = "alert-expiring-authorizations";
/**
 * Every 6 hours, for a warning a day ahead: ops hear 18 to 24 hours before an authorization
 * lapses. Hourly it cost 1,440 Inngest executions a month with no orders
 * (docs/decisions/0190-idle-crons-become-events.md).
 */
export const alertExpiringAuthorizationsCron = "45 */6 * * *";
/** Ops hear of an uncaptured authorization this long before it lapses. */
export const expiryWarningMs = 24 * 3600_000;
/** At most this many alerts per run; the next run takes the rest, soonest expiry first. */
export const maxExpiryAlertsPerRun = 50;

/**
 * Alerts ops, once per order, about card authorizations that will lapse within a day without a
 * capture: after that the capture fails and the sale is lost. The timeline entry written after
 * each alert is what keeps later runs from alerting again.
 */
export function createAlertExpiringAuthorizations(inngest: Inngest, deps: WorkflowDependencies) {
  const { expiringAuthorizations } = deps.recovery;

  return inngest.createFunction(
    {
      id: alertExpiringAuthorizationsFunctionId,
      name: "Alert on authorizations about to expire uncaptured",
      triggers: [{ cron: alertExpiringAuthorizationsCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step, runId }) => {
      const expiring = await step.run("find-expiring-authorizations", () =>
        expiringAuthorizations.find(new Date(Date.now() + expiryWarningMs), maxExpiryAlertsPerRun),
      );
      for (const authorization of expiring) {
        const { orderId, expiresAt } = authorization;
        await step.run("alert-authorization-expiring", () =>
          deps.alerts.notify({
            title: "Authorization expiring without capture",
            fields: {
              orderId,
              expiresAt,
              status: authorization.status,
              paymentIntentId: authorization.paymentIntentId,
              amount: `${authorization.total} ${authorization.currency}`,
              action: "Get the order's fulfilment going before then, or tell the customer",
            },
          }),
        );
        await step.run("record-expiry-alerted", () =>
          expiringAuthorizations.recordAlerted(orderId, expiresAt, runId),
        );
      }
      return { alerted: expiring.map((authorization) => authorization.orderId) };
    },
  );
}
