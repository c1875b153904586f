import type { Sql } from "./sql";
import { quoteIdent } from "./database";
import type { EngineEvent, SdkFunctionConfig } from "./types";

export type EventIntake = "accepted" | "deduplicated" | "redelivered";

export interface StoredEvent {
  internal_id: string;
  id: string | null;
  name: string;
  payload: EngineEvent;
  received_at: Date;
  deduplicated: boolean;
}

/** Received events, event-id dedupe, synced apps/functions and cron bookkeeping. */
export class EventStore {
  private readonly s: string;

  constructor(
    private readonly sql: Sql,
    schema: string,
  ) {
    this.s = quoteIdent(schema);
  }

  /**
   * Records a received event. With a user `id`, a second event with that id inside the
   * dedupe window is stored as deduplicated (counted, never triggers anything). The same
   * internal id twice is the SDK retrying one send: "redelivered", ignored once the first
   * delivery finished its work (`triggered`); until then the retry is that delivery again
   * (its answer may have been an error after the event was stored), so it is "accepted"
   * again and does what is still undone.
   */
  async saveEvent(input: {
    internalId: string;
    userId: string | undefined;
    payload: EngineEvent;
    now: Date;
    dedupeUntil: Date;
    /** False when the event still has work to do (runs to start, runs to cancel or resume). */
    triggered: boolean;
  }): Promise<EventIntake> {
    const s = this.s;
    const { rows } = await this.sql.query<{ deduplicated: boolean }>(
      "saveEvent",
      `WITH dedupe AS (
         INSERT INTO ${s}.event_ids (id, internal_id, expires_at)
         SELECT $2::text, $1, $5 WHERE $2::text IS NOT NULL
         ON CONFLICT (id) DO UPDATE SET internal_id = EXCLUDED.internal_id, expires_at = EXCLUDED.expires_at
           WHERE ${s}.event_ids.expires_at <= $4
         RETURNING 1
       )
       INSERT INTO ${s}.events (internal_id, id, name, payload, received_at, deduplicated, triggered)
       VALUES ($1, $2::text, $3, $6, $4, $2::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM dedupe),
               $7 OR ($2::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM dedupe)))
       ON CONFLICT (internal_id) DO UPDATE SET triggered = ${s}.events.triggered
         WHERE NOT ${s}.events.triggered
       RETURNING deduplicated`,
      [
        input.internalId,
        input.userId ?? null,
        input.payload.name,
        input.now,
        input.dedupeUntil,
        JSON.stringify(input.payload),
        input.triggered,
      ],
    );
    const row = rows[0];
    if (!row) return "redelivered";
    return row.deduplicated ? "deduplicated" : "accepted";
  }

  /** Every run the event triggers exists (and its cancellations and resumptions are done). */
  async markTriggered(internalId: string): Promise<void> {
    await this.sql.query(
      "markEventTriggered",
      `UPDATE ${this.s}.events SET triggered = true WHERE internal_id = $1 AND NOT triggered`,
      [internalId],
    );
  }

  async listEvents(filter: {
    name?: string;
    limit: number;
  }): Promise<{ events: StoredEvent[]; received: number; accepted: number }> {
    const s = this.s;
    const { rows } = await this.sql.query<{
      events: StoredEvent[] | null;
      received: number;
      accepted: number;
    }>(
      "listEvents",
      `SELECT (SELECT json_agg(e ORDER BY e.seq) FROM (
                 SELECT seq, internal_id, id, name, payload, received_at, deduplicated FROM ${s}.events
                 WHERE $1::text IS NULL OR name = $1 ORDER BY seq DESC LIMIT $2) e) AS events,
              (SELECT count(*)::int FROM ${s}.events WHERE $1::text IS NULL OR name = $1) AS received,
              (SELECT count(*)::int FROM ${s}.events WHERE ($1::text IS NULL OR name = $1) AND NOT deduplicated) AS accepted`,
      [filter.name ?? null, filter.limit],
    );
    const row = rows[0];
    return { events: row?.events ?? [], received: row?.received ?? 0, accepted: row?.accepted ?? 0 };
  }

  async getEvent(internalId: string): Promise<StoredEvent | undefined> {
    const { rows } = await this.sql.query<StoredEvent>(
      "getEvent",
      `SELECT internal_id, id, name, payload, received_at, deduplicated FROM ${this.s}.events WHERE internal_id = $1`,
      [internalId],
    );
    return rows[0];
  }

  /** Replaces an app's functions with what it just reported. */
  async saveApp(input: {
    url: string;
    appId: string;
    functions: SdkFunctionConfig[];
    now: Date;
  }): Promise<void> {
    const s = this.s;
    await this.sql.query(
      "saveApp",
      `WITH app AS (
         INSERT INTO ${s}.apps (url, app_id, synced_at) VALUES ($1, $2, $3)
         ON CONFLICT (url) DO UPDATE SET app_id = EXCLUDED.app_id, synced_at = EXCLUDED.synced_at
       ), removed AS (
         DELETE FROM ${s}.functions WHERE app_url = $1
           AND id NOT IN (SELECT f->>'id' FROM jsonb_array_elements($4::jsonb) AS f)
       )
       INSERT INTO ${s}.functions (id, app_url, config)
       SELECT f->>'id', $1, f FROM jsonb_array_elements($4::jsonb) AS f
       ON CONFLICT (id) DO UPDATE SET app_url = EXCLUDED.app_url, config = EXCLUDED.config`,
      [input.url, input.appId, input.now, JSON.stringify(input.functions)],
    );
  }

  async loadFunctions(): Promise<{ app_url: string; config: SdkFunctionConfig }[]> {
    const { rows } = await this.sql.query<{ app_url: string; config: SdkFunctionConfig }>(
      "loadFunctions",
      `SELECT app_url, config FROM ${this.s}.functions ORDER BY id`,
    );
    return rows;
  }

  async listApps(): Promise<{ url: string; app_id: string; synced_at: Date }[]> {
    const { rows } = await this.sql.query<{ url: string; app_id: string; synced_at: Date }>(
      "listApps",
      `SELECT url, app_id, synced_at FROM ${this.s}.apps ORDER BY url`,
    );
    return rows;
  }

  /** Last fire time per cron; a new cron starts counting from `now`. */
  async cronLastFires(
    crons: { functionId: string; cron: string }[],
    now: Date,
  ): Promise<Map<string, number>> {
    const s = this.s;
    const { rows } = await this.sql.query<{ function_id: string; cron: string; last_fire_at: Date }>(
      "cronLastFires",
      `WITH wanted AS (
         SELECT c.function_id, c.cron FROM jsonb_to_recordset($1::jsonb) AS c(function_id text, cron text)
       ), created AS (
         INSERT INTO ${s}.cron_fires (function_id, cron, last_fire_at)
         SELECT function_id, cron, $2 FROM wanted
         ON CONFLICT (function_id, cron) DO NOTHING
         RETURNING function_id, cron, last_fire_at
       )
       SELECT function_id, cron, last_fire_at FROM created
       UNION ALL
       SELECT f.function_id, f.cron, f.last_fire_at FROM ${s}.cron_fires f JOIN wanted w USING (function_id, cron)`,
      [JSON.stringify(crons.map((c) => ({ function_id: c.functionId, cron: c.cron }))), now],
    );
    return new Map(
      rows.map((row) => [cronKey(row.function_id, row.cron), new Date(row.last_fire_at).getTime()]),
    );
  }

  /** Moves a cron's last fire forward; false when someone else already fired it. */
  async cronAdvance(functionId: string, cron: string, from: Date, to: Date): Promise<boolean> {
    const { rowCount } = await this.sql.query(
      "cronAdvance",
      `UPDATE ${this.s}.cron_fires SET last_fire_at = $4 WHERE function_id = $1 AND cron = $2 AND last_fire_at = $3`,
      [functionId, cron, from, to],
    );
    return rowCount === 1;
  }
}

export function cronKey(functionId: string, cron: string): string {
  return `${functionId}\u0000${cron}`;
}
