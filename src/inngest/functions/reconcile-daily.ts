import type { Inngest } from "inngest";
import { previousShopDay } from "../../reconciliation/shop-day";
import type { WorkflowDependencies } from "../dependencies";

export const reconcileDailyFunctionId = "reconcile-daily";
/**
 * Every 3 hours in UTC rather than once at a local hour: a `TZ=` cron is not understood by every
 * engine this app runs on (the local engine refuses zones other than UTC), and a look every few
 * hours makes a missed night (an outage, a deploy) catch up the same morning. Each run reconciles
 * the shop's yesterday once: a day that has a report already is left alone (ops re-run it on
 * purpose). It was hourly: 1,470 Inngest executions a month with no orders, 510 now
 * (docs/decisions/0190-idle-crons-become-events.md).
 */
export const reconcileDailyCron = "20 */3 * * *";

/** The daily reconciliation against Stripe and the carrier (src/reconciliation). */
export function createReconcileDaily(inngest: Inngest, deps: WorkflowDependencies) {
  return inngest.createFunction(
    {
      id: reconcileDailyFunctionId,
      name: "Reconcile yesterday with Stripe and the carrier",
      triggers: [{ cron: reconcileDailyCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step }) => {
      const reconciliation = deps.recovery.reconciliation;
      const day = await step.run("plan-day", async () => {
        const { date } = previousShopDay(new Date(), reconciliation.timeZone);
        const existing = await reconciliation.list({ date });
        return { date, done: existing.length > 0 };
      });
      if (day.done) return { date: day.date, skipped: "already reconciled" };
      // One step: the run pages through Stripe itself and writes the report in one transaction, so
      // a retry simply reconciles the day again.
      return step.run("reconcile-day", async () => {
        const report = await reconciliation.run({ date: day.date, by: "cron" });
        return { id: report.id, date: report.date, mismatches: report.mismatchCount, counts: report.counts };
      });
    },
  );
}
