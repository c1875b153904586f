import pg from "pg";
import type { Logger } from "../logger";
import { parseLifecycleEvent } from "./lifecycle";

/** What the outbox sends with: an Inngest client's `send` (one without the encryption middleware). */
export interface LifecycleEventSink {
  send(events: { id: string; name: string; data: object; ts: number }[]): Promise<unknown>;
}

/** Events that go with a batch of lifecycle events (their webhook deliveries), by their event ids. */
export type OutboxCompanions = (
  client: pg.PoolClient,
  eventIds: string[],
) => Promise<{ id: string; name: string; data: object; ts: number }[]>;

export interface LifecycleOutbox {
  /** Starts listening for new rows (LISTEN lifecycle_outbox) and the slow sweep; sends what is pending. */
  start(): Promise<void>;
  /** Stops both and waits for a send in flight. */
  stop(): Promise<void>;
  /** Sends every pending row now; resolves with how many went. Safe to call at any time, from anywhere. */
  drain(): Promise<number>;
}

interface PendingRow {
  id: string;
  event_id: string;
  name: string;
  data: unknown;
  created_at: Date;
}

/** Rows per send: one POST to the event API, one UPDATE. */
const batchSize = 100;
/** The sweep behind LISTEN/NOTIFY: a notification lost with a dropped connection, a failed send. */
const defaultSweepEveryMs = 15_000;

/**
 * The sender of the lifecycle outbox (decision 0196). The rows are written by triggers in the
 * transaction of each fact (prisma/migrations/20270113000000_lifecycle_events); this publishes them
 * to Inngest with their stable event id and marks them sent.
 *
 * Rows are taken with FOR UPDATE SKIP LOCKED inside a transaction held over the send, so two
 * processes never send the same row at once; a crash after Inngest took a batch and before the
 * mark committed sends it again with the same ids, which Inngest drops (it deduplicates by event id
 * for 24 hours, far longer than a restart). Woken by PostgreSQL's NOTIFY at commit, and by an
 * in-process sweep: no Inngest cron, so an idle shop spends no executions on it (decision 0190).
 */
export function createLifecycleOutbox(deps: {
  pool: pg.Pool;
  /** For the LISTEN connection, held apart from the pool. */
  databaseUrl: string;
  sink: LifecycleEventSink;
  logger: Logger;
  sweepEveryMs?: number;
  /** More events to send in the same batch, read in its transaction (src/webhooks/dispatch.ts). */
  companions?: OutboxCompanions;
}): LifecycleOutbox {
  const { pool, sink, logger } = deps;
  let listener: pg.Client | undefined;
  let sweep: NodeJS.Timeout | undefined;
  let running: Promise<number> | undefined;
  let again = false;
  let stopped = true;

  async function sendBatch(): Promise<number> {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const { rows } = await client.query<PendingRow>(
        `SELECT id, event_id, name, data, created_at FROM lifecycle_outbox
         WHERE sent_at IS NULL AND last_error IS NULL ORDER BY id LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`,
      );
      if (rows.length === 0) {
        await client.query("COMMIT");
        return 0;
      }
      const events = [];
      for (const row of rows) {
        try {
          events.push({
            id: row.event_id,
            ...parseLifecycleEvent(row.name, row.data),
            ts: row.created_at.getTime(),
          });
        } catch (error) {
          // Never sent as it is, and never in the way of the rest: kept, with why, for ops to see.
          const message = error instanceof Error ? error.message : String(error);
          logger.error(
            { eventId: row.event_id, err: error },
            "lifecycle event does not fit its schema; not sent",
          );
          await client.query(`UPDATE lifecycle_outbox SET last_error = $2 WHERE id = $1`, [row.id, message]);
        }
      }
      if (events.length > 0 && deps.companions)
        events.push(
          ...(await deps.companions(
            client,
            events.map((event) => event.id),
          )),
        );
      if (events.length > 0) await sink.send(events);
      await client.query(
        `UPDATE lifecycle_outbox SET sent_at = now(), attempts = attempts + 1
         WHERE id = ANY($1) AND last_error IS NULL`,
        [rows.map((row) => row.id)],
      );
      await client.query("COMMIT");
      return rows.length;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async function drainAll(): Promise<number> {
    let sent = 0;
    for (;;) {
      const count = await sendBatch();
      sent += count;
      if (count < batchSize) return sent;
    }
  }

  /** One drain at a time in this process; a wake-up during one runs it once more after. */
  function drain(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let sent = 0;
      try {
        do {
          again = false;
          sent += await drainAll();
        } while (again);
        return sent;
      } finally {
        running = undefined;
      }
    })();
    return running;
  }

  function wake(): void {
    if (stopped) return;
    drain().catch((error: unknown) =>
      // Left pending: the sweep tries again.
      logger.warn({ err: error }, "lifecycle events not sent yet; retrying on the next sweep"),
    );
  }

  async function listen(): Promise<void> {
    const client = new pg.Client({ connectionString: deps.databaseUrl });
    client.on("notification", wake);
    client.on("error", (error) => {
      logger.warn({ err: error }, "lifecycle outbox: LISTEN connection lost; the sweep reconnects");
      if (listener === client) listener = undefined;
      client.end().catch(() => undefined);
    });
    await client.connect();
    await client.query("LISTEN lifecycle_outbox");
    listener = client;
  }

  return {
    async start() {
      stopped = false;
      await listen().catch((error: unknown) =>
        logger.warn({ err: error }, "lifecycle outbox: LISTEN failed; sending on the sweep"),
      );
      sweep = setInterval(() => {
        if (!listener) listen().catch(() => undefined);
        wake();
      }, deps.sweepEveryMs ?? defaultSweepEveryMs);
      sweep.unref();
      wake();
    },
    async stop() {
      stopped = true;
      if (sweep) clearInterval(sweep);
      sweep = undefined;
      const closing = listener;
      listener = undefined;
      await closing?.end().catch(() => undefined);
      await running?.catch(() => undefined);
    },
    drain,
  };
}
