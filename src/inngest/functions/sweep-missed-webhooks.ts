import type { Inngest } from "inngest";
import type { WorkflowDependencies } from "../dependencies";

export const sweepMissedWebhooksFunctionId = "sweep-missed-webhooks";
/**
 * Every 2 hours: Stripe itself redelivers a webhook that failed for 3 days; this sweep is for one
 * that never arrives (an endpoint disabled or misconfigured). Every 15 minutes it cost 11,520
 * Inngest executions a month with no orders (docs/decisions/0190-idle-crons-become-events.md).
 */
export const sweepMissedWebhooksCron = "5 */2 * * *";
export const stripeEventsCheckpoint = "stripe-events";
/** With no checkpoint yet, look this far back (Stripe lists events for 30 days). */
export const firstSweepLookbackMs = 3 * 24 * 3600_000;
/** Each sweep starts this far before the checkpoint: the intake is idempotent, a gap is not. */
export const sweepOverlapMs = 5 * 60_000;
/**
 * An event the sweep handles first counts as missed only when it is older than this: a younger one
 * is most likely racing its own webhook delivery (harmless, the intake is idempotent) and must not
 * raise an alert.
 */
export const webhookGraceMs = 2 * 60_000;
/** 100 events per page; beyond this the checkpoint stays put and the next sweep starts over. */
export const maxPagesPerSweep = 20;

type Counts = Record<string, number>;

/**
 * Stripe's documented recovery path for missed webhooks: list the checkout events created since the
 * last checkpoint through the Events API and hand each to the webhook's own intake. An event the
 * webhook already delivered is a duplicate there and changes nothing; one it never delivered is
 * processed now, and ops are told once per sweep about the orders it recovered.
 */
export function createSweepMissedWebhooks(inngest: Inngest, deps: WorkflowDependencies) {
  const { checkpoints, stripeEvents, intake } = deps.recovery;

  return inngest.createFunction(
    {
      id: sweepMissedWebhooksFunctionId,
      name: "Sweep Stripe's Events API for missed webhooks",
      triggers: [{ cron: sweepMissedWebhooksCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step }) => {
      const window = await step.run("plan-window", async () => {
        const checkpoint = await checkpoints.get(stripeEventsCheckpoint);
        const until = new Date();
        const since = checkpoint
          ? new Date(checkpoint.getTime() - sweepOverlapMs)
          : new Date(until.getTime() - firstSweepLookbackMs);
        return { since: since.toISOString(), until: until.toISOString() };
      });

      const outcomes: Counts = {};
      const recovered = new Set<string>();
      let startingAfter: string | undefined;
      let complete = false;
      for (let page = 0; page < maxPagesPerSweep && !complete; page++) {
        // Listing and handling share a step: a retry lists the same page again (the window is
        // fixed) and the intake turns what it already handled into duplicates.
        const handled = await step.run("handle-events-page", async () => {
          const { events, hasMore } = await stripeEvents.page({
            since: new Date(window.since),
            until: new Date(window.until),
            ...(startingAfter ? { startingAfter } : {}),
          });
          const results: { outcome: string; orderId: string | null; missed: boolean }[] = [];
          const lateBefore = (Date.now() - webhookGraceMs) / 1000;
          // Pages come newest first; within a page, take them in the order they happened.
          for (const event of [...events].reverse()) {
            const result = await intake.handle(event);
            const missed = result.outcome === "processed" && event.created < lateBefore;
            results.push({ outcome: result.outcome, orderId: result.orderId ?? null, missed });
          }
          return { results, lastEventId: events.at(-1)?.id ?? null, hasMore };
        });
        for (const { outcome, orderId, missed } of handled.results) {
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          if (missed && orderId) recovered.add(orderId);
        }
        startingAfter = handled.lastEventId ?? undefined;
        complete = !handled.hasMore || handled.lastEventId === null;
      }

      if (complete) {
        await step.run("advance-checkpoint", () =>
          checkpoints.advance(stripeEventsCheckpoint, new Date(window.until)),
        );
      }
      const orderIds = [...recovered];
      if (orderIds.length > 0) {
        await step.run("alert-missed-webhooks", () =>
          deps.alerts.notify({
            title: "Missed Stripe webhooks recovered",
            fields: {
              orders: orderIds.length,
              orderIds: orderIds.slice(0, 20).join(", "),
              since: window.since,
              action: "Find out why the webhook missed them: Stripe dashboard → Webhooks → attempts",
            },
          }),
        );
      }
      return { ...window, complete, outcomes, recoveredOrderIds: orderIds };
    },
  );
}
