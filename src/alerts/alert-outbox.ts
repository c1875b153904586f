import { randomUUID } from "node:crypto";
import type { IncomingWebhookSendArguments } from "@slack/webhook";
import type { Database } from "../db/client";
import type { Prisma } from "../generated/prisma/client";
import type { Logger } from "../logger";
import type { AlertDeliveryObserver } from "./alerter";
import { groupedAlertMessage, type AlertContent, type Field } from "./slack-message";

/** One alert to keep until delivered: its key (one row per key) and the kind it is grouped with. */
export interface OutgoingAlert {
  key: string;
  group: string;
  content: AlertContent;
}

export interface AlertDrainResult {
  /** Messages Slack took (a grouped message counts once). */
  messages: number;
  /** Alerts those messages carried. */
  delivered: number;
  /** Alerts whose message failed; retried after their backoff. */
  retrying: number;
}

export interface AlertBacklog {
  /** Alerts not delivered yet (waiting for their group's window, or failing). */
  undelivered: number;
  /** The oldest alert that at least one attempt failed to deliver. */
  oldestFailingAt?: Date;
}

/** What the ops console and the metrics read; `drain` is what the cron runs. */
export interface AlertOutbox {
  enqueue(alert: OutgoingAlert): Promise<void>;
  drain(): Promise<AlertDrainResult>;
  /**
   * One group's undelivered alerts as one message now, its window being over (deliver-alert-group
   * runs it once its debounce has waited the window); `retryInMs`: how long until a failed message
   * is due again, on this process's clock (null: nothing left to retry).
   */
  deliverGroup(group: string): Promise<AlertDrainResult & { retryInMs: number | null }>;
  backlog(): Promise<AlertBacklog>;
  /** Stops the window timers (the rows stay; the cron delivers them). */
  close(): void;
}

export interface AlertRetryPolicy {
  /** Delay before retry n (1-based): doubling from this ... */
  firstRetryAfterMs: number;
  /** ... up to this. Alerts are never given up: they are the last word on a failed order. */
  maxRetryAfterMs: number;
}

export const defaultAlertRetryPolicy: AlertRetryPolicy = {
  firstRetryAfterMs: 30_000,
  maxRetryAfterMs: 15 * 60_000,
};

/** Longer than the Slack timeout lets one attempt take; a lease left by a dead process runs out after it. */
const leaseMs = 60_000;
/** Groups sent per drain; the next run takes the rest. */
const groupsPerDrain = 20;
/** Alerts one message carries (it lists the first few and counts them all); the rest go in the next. */
const alertsPerMessage = 500;

interface StoredPayload {
  kind: AlertContent["kind"];
  fields: Array<[string, string | number | null]>;
  runUrl?: string;
  orderUrl?: string;
  runId?: string;
}

function toPayload(content: AlertContent): StoredPayload {
  return {
    kind: content.kind,
    fields: content.fields.map(([label, value]) => [label, value ?? null]),
    ...(content.runUrl ? { runUrl: content.runUrl } : {}),
    ...(content.orderUrl ? { orderUrl: content.orderUrl } : {}),
    ...(content.runId ? { runId: content.runId } : {}),
  };
}

function fromRow(row: { title: string; payload: Prisma.JsonValue; orderId: string | null; createdAt: Date }) {
  const payload = row.payload as unknown as StoredPayload;
  return {
    kind: payload.kind,
    title: row.title,
    fields: payload.fields.map(([label, value]): Field => [label, value ?? undefined]),
    ...(payload.runUrl ? { runUrl: payload.runUrl } : {}),
    ...(payload.orderUrl ? { orderUrl: payload.orderUrl } : {}),
    ...(payload.runId ? { runId: payload.runId } : {}),
    ...(row.orderId ? { orderId: row.orderId } : {}),
    raisedAt: row.createdAt,
  };
}

/**
 * The durable outbox of ops alerts, the same pattern as the e-mail outbox: an alert is a row
 * (unique by its key, so a retried failure handler or a repeated event keeps one) until Slack
 * answered 2xx for the message that carried it. A kind's alerts (`group`) wait `groupWindowMs`
 * after the oldest of them, then go as one message: a lone alert alone, a storm as one message
 * with a count and its first few orders. A failed message is retried with doubling backoff, by the
 * next drain (the cron `deliver-ops-alerts`, every minute, or after a restart).
 *
 * Slack's incoming webhooks take no idempotency key, so "once" is ours to keep: a message is sent
 * only under a lease on its rows, and the rows are marked delivered as soon as Slack answered. The
 * one window left is a process dying between Slack's answer and that update, which sends the
 * message again after the lease: never lost, at worst twice.
 */
export function createAlertOutbox(deps: {
  db: Database;
  send: (message: IncomingWebhookSendArguments) => Promise<void>;
  logger: Logger;
  groupWindowMs: number;
  retry?: AlertRetryPolicy;
  now?: () => Date;
  onDelivery?: AlertDeliveryObserver;
  /** Told the number of undelivered alerts after every change, for the metric. */
  onBacklog?: (undelivered: number) => void;
  /**
   * Told of every stored alert (the app sends `shop/ops-alert.queued`, whose debounced run
   * delivers the group after its window). When it throws, or without it, this process's own
   * timer delivers the group, and the safety-net cron after a restart.
   */
  onQueued?: (alert: { key: string; group: string }) => Promise<void>;
}): AlertOutbox {
  const { db, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const retry = deps.retry ?? defaultAlertRetryPolicy;
  const timers = new Map<string, NodeJS.Timeout>();

  async function reportBacklog(): Promise<void> {
    if (!deps.onBacklog) return;
    deps.onBacklog(await db.opsAlert.count({ where: { deliveredAt: null } }));
  }

  /** Delivers the group when its window closes; the cron does it anyway if this process is gone by then. */
  function deliverWhenDue(group: string, dueInMs: number): void {
    if (timers.has(group)) return;
    // A little past the window, so the group is due when the timer fires.
    const timer = setTimeout(() => {
      timers.delete(group);
      void drain();
    }, dueInMs + 100);
    timer.unref();
    timers.set(group, timer);
  }

  async function deliverGroup(group: string, at: Date): Promise<AlertDrainResult> {
    const token = randomUUID();
    const taken = await db.opsAlert.updateMany({
      where: {
        groupKey: group,
        deliveredAt: null,
        createdAt: { lte: at },
        OR: [{ leaseUntil: null }, { leaseUntil: { lt: at } }],
      },
      data: { leaseToken: token, leaseUntil: new Date(at.getTime() + leaseMs) },
    });
    if (taken.count === 0) return { messages: 0, delivered: 0, retrying: 0 };
    const rows = await db.opsAlert.findMany({
      where: { leaseToken: token },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: alertsPerMessage,
    });
    // Past the cap, the rest are let go for the next message.
    await db.opsAlert.updateMany({
      where: { leaseToken: token, id: { notIn: rows.map((row) => row.id) } },
      data: { leaseToken: null, leaseUntil: null },
    });
    const alerts = rows.map(fromRow);
    const kind = alerts[0]?.kind ?? "notice";
    try {
      await deps.send(groupedAlertMessage(alerts));
    } catch (error) {
      const attempts = Math.max(...rows.map((row) => row.attempts)) + 1;
      const backoff = Math.min(retry.firstRetryAfterMs * 2 ** (attempts - 1), retry.maxRetryAfterMs);
      const message = error instanceof Error ? error.message : String(error);
      await db.opsAlert.updateMany({
        where: { leaseToken: token },
        data: {
          attempts,
          lastError: message.slice(0, 500),
          nextAttemptAt: new Date(now().getTime() + backoff),
          leaseToken: null,
          leaseUntil: null,
        },
      });
      for (const _ of rows) deps.onDelivery?.(kind, "failed");
      // The webhook URL is a secret: the error's message only (axios puts the URL in its config).
      logger.warn(
        { group, alerts: rows.length, attempts, retryInMs: backoff, error: message },
        "alert could not be delivered to Slack; kept and retried",
      );
      return { messages: 0, delivered: 0, retrying: rows.length };
    }
    await db.opsAlert.updateMany({
      where: { leaseToken: token },
      data: { deliveredAt: now(), leaseToken: null, leaseUntil: null },
    });
    for (const _ of rows) deps.onDelivery?.(kind, "sent");
    logger.info({ group, alerts: rows.length }, "alert delivered to Slack");
    return { messages: 1, delivered: rows.length, retrying: 0 };
  }

  async function drain(): Promise<AlertDrainResult> {
    const at = now();
    const total: AlertDrainResult = { messages: 0, delivered: 0, retrying: 0 };
    try {
      const groups = await db.opsAlert.groupBy({
        by: ["groupKey"],
        where: { deliveredAt: null },
        _min: { createdAt: true },
        _max: { nextAttemptAt: true },
        orderBy: { _min: { createdAt: "asc" } },
      });
      const due = groups.filter(
        (group) =>
          (group._min.createdAt?.getTime() ?? Infinity) + deps.groupWindowMs <= at.getTime() &&
          (group._max.nextAttemptAt?.getTime() ?? 0) <= at.getTime(),
      );
      for (const group of due.slice(0, groupsPerDrain)) {
        const result = await deliverGroup(group.groupKey, at);
        total.messages += result.messages;
        total.delivered += result.delivered;
        total.retrying += result.retrying;
      }
      await reportBacklog();
    } catch (error) {
      // The database is what keeps alerts: when it is gone the next drain tries again.
      logger.warn({ err: error }, "could not drain the ops alerts outbox");
    }
    return total;
  }

  return {
    async enqueue(alert) {
      const at = now();
      try {
        await db.opsAlert.createMany({
          data: [
            {
              alertKey: alert.key,
              groupKey: alert.group,
              title: alert.content.title,
              payload: toPayload(alert.content) as unknown as Prisma.InputJsonValue,
              orderId: alert.content.orderId ?? null,
              createdAt: at,
              nextAttemptAt: at,
            },
          ],
          skipDuplicates: true,
        });
      } catch (error) {
        // Nowhere to keep it: say it in the log, in full, rather than lose it silently.
        logger.error({ err: error, alert: alert.content }, "ALERT could not be stored for Slack");
        deps.onDelivery?.(alert.content.kind, "failed");
        return;
      }
      // With no window the alert goes at once from here; its run retries should Slack fail.
      if (deps.groupWindowMs === 0) await drain();
      let told = false;
      if (deps.onQueued) {
        try {
          await deps.onQueued({ key: alert.key, group: alert.group });
          told = true;
        } catch (error) {
          logger.warn({ err: error, group: alert.group }, "alert kept; its delivery event was not sent");
        }
      }
      if (!told && deps.groupWindowMs > 0) deliverWhenDue(alert.group, deps.groupWindowMs);
      if (deps.groupWindowMs > 0) await reportBacklog().catch(() => undefined);
    },
    drain,
    async deliverGroup(group) {
      const at = now();
      // A message that failed waits for its backoff (the run sleeps until then).
      const failing = await db.opsAlert.findFirst({
        where: { groupKey: group, deliveredAt: null, attempts: { gt: 0 } },
        orderBy: { nextAttemptAt: "desc" },
        select: { nextAttemptAt: true },
      });
      if (failing && failing.nextAttemptAt > at) {
        return {
          messages: 0,
          delivered: 0,
          retrying: 0,
          retryInMs: Math.max(1_000, failing.nextAttemptAt.getTime() - at.getTime()),
        };
      }
      const result = await deliverGroup(group, at);
      await reportBacklog().catch(() => undefined);
      // Alerts stored since have events of their own; rows another delivery holds are its to finish.
      if (result.retrying === 0) return { ...result, retryInMs: null };
      const failed = await db.opsAlert.findFirst({
        where: { groupKey: group, deliveredAt: null },
        orderBy: { nextAttemptAt: "desc" },
        select: { nextAttemptAt: true },
      });
      return {
        ...result,
        retryInMs: failed ? Math.max(1_000, failed.nextAttemptAt.getTime() - now().getTime()) : null,
      };
    },
    async backlog() {
      const [undelivered, oldestFailing] = await Promise.all([
        db.opsAlert.count({ where: { deliveredAt: null } }),
        db.opsAlert.findFirst({
          where: { deliveredAt: null, attempts: { gt: 0 } },
          orderBy: { createdAt: "asc" },
          select: { createdAt: true },
        }),
      ]);
      return { undelivered, ...(oldestFailing ? { oldestFailingAt: oldestFailing.createdAt } : {}) };
    },
    close() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
