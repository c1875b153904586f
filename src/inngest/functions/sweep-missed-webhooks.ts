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

  /** From the checkpoint (less the overlap), or 3 days back on the first sweep, to now. */
  const planWindow = async () => {
    const checkpoint = await checkpoints.get(stripeEventsCheckpoint);
    const until = new Date();
    const since = checkpoint
      ? new Date(checkpoint.getTime() - sweepOverlapMs)
      : new Date(until.getTime() - firstSweepLookbackMs);
    return { since: since.toISOString(), until: until.toISOString() };
  };

  return inngest.createFunction(
    {
      id: sweepMissedWebhooksFunctionId,
      name: "Sweep Stripe's Events API for missed webhooks",
      triggers: [{ cron: sweepMissedWebhooksCron }],
      concurrency: { limit: 1 },
      retries: 3,
    },
    async ({ step }) => {
      const outcomes: Counts = {};
      const recovered = new Set<string>();
      let window: { since: string; until: string } | undefined;
      let startingAfter: string | undefined;
      let complete = false;
      for (let page = 0; page < maxPagesPerSweep && !complete; page++) {
        // One step a page. The first plans the window (memoised with its page, so later pages and
        // their retries keep it); the last moves the checkpoint once every page was handled. An
        // idle sweep is then one step, where planning, the page and the checkpoint were three
        // (docs/decisions/0190-idle-crons-become-events.md). Listing and handling share a step: a
        // retry lists the same page again and the intake turns what it already handled into
        // duplicates.
        const planned = window;
        const handled = await step.run("sweep-events-page", async () => {
          const fixed = planned ?? (await planWindow());
          const { events, hasMore } = await stripeEvents.page({
            since: new Date(fixed.since),
            until: new Date(fixed.until),
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
          const lastEventId = events.at(-1)?.id ?? null;
          const done = !hasMore || lastEventId === null;
          if (done) await checkpoints.advance(stripeEventsCheckpoint, new Date(fixed.until));
          return { window: fixed, results, lastEventId, done };
        });
        window = handled.window;
        for (const { outcome, orderId, missed } of handled.results) {
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          if (missed && orderId) recovered.add(orderId);
        }
        startingAfter = handled.lastEventId ?? undefined;
        complete = handled.done;
      }
      if (!window) return { complete, outcomes, recoveredOrderIds: [] };

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
