import { AppError } from "../../errors";
import { parseDurationMs } from "../../shared/duration";
import type { CompiledExpression } from "./expressions";
import type { Sql } from "./sql";
import type { EngineEvent } from "./types";

/**
 * Inngest's `debounce` and `batchEvents`, the two options that delay a run's start to gather
 * events (https://www.inngest.com/docs/guides/debounce, /docs/guides/batching):
 *
 * - debounce: each matching event (per `key`) replaces the pending one and restarts the `period`;
 *   the run starts `period` after the last event, or `timeout` after the first, with the LAST event.
 * - batchEvents: the first matching event (per `key`, and `if` it matches) opens a batch; the run
 *   starts when the batch holds `maxSize` events or `timeout` after the first, with every event
 *   (`event` is the first).
 *
 * A cron fire is not delayed (the scheduler starts it at once). The pending start is a row in
 * PostgreSQL, so a restart keeps it; it is deleted in the statement that hands its events to the
 * scheduler, which then starts the run (a crash between the two loses that start, as a crash
 * between a cron's advance and its run loses that fire: the app's safety-net crons cover both).
 */
export interface DeferredStart {
  kind: "debounce" | "batch";
  key?: CompiledExpression;
  /** Batches only: events that do not match are not batched (a run of their own). */
  if?: CompiledExpression;
  periodMs: number;
  timeoutMs?: number;
  maxSize?: number;
}

interface SdkDebounce {
  key?: string;
  period?: string;
  timeout?: string;
}

interface SdkBatch {
  maxSize?: number;
  timeout?: string;
  key?: string;
  if?: string;
}

function duration(fnId: string, what: string, value: string | undefined): number {
  const ms = value === undefined ? undefined : parseDurationMs(value);
  if (ms === undefined || ms <= 0)
    throw new AppError("validation_failed", `Function "${fnId}": bad ${what} "${String(value)}"`);
  return ms;
}

/** The deferral a function config asks for; at most one (Inngest allows debounce or a batch). */
export function compileDeferredStart(
  fnId: string,
  config: { debounce?: unknown; batchEvents?: unknown },
  compile: (what: string, source: string) => CompiledExpression,
): DeferredStart | undefined {
  const debounce = config.debounce as SdkDebounce | undefined | null;
  const batch = config.batchEvents as SdkBatch | undefined | null;
  if (debounce && batch)
    throw new AppError("validation_failed", `Function "${fnId}": debounce and batchEvents together`);
  if (debounce) {
    return {
      kind: "debounce",
      periodMs: duration(fnId, "debounce period", debounce.period),
      ...(debounce.timeout !== undefined
        ? { timeoutMs: duration(fnId, "debounce timeout", debounce.timeout) }
        : {}),
      ...(debounce.key ? { key: compile("debounce key", debounce.key) } : {}),
    };
  }
  if (batch) {
    const maxSize = batch.maxSize;
    if (typeof maxSize !== "number" || !Number.isInteger(maxSize) || maxSize < 1)
      throw new AppError(
        "validation_failed",
        `Function "${fnId}": bad batchEvents maxSize "${String(maxSize)}"`,
      );
    return {
      kind: "batch",
      maxSize,
      periodMs: duration(fnId, "batchEvents timeout", batch.timeout),
      ...(batch.key ? { key: compile("batchEvents key", batch.key) } : {}),
      ...(batch.if ? { if: compile("batchEvents if", batch.if) } : {}),
    };
  }
  return undefined;
}

export interface DueStart {
  functionId: string;
  events: EngineEvent[];
  eventIds: string[];
}

/** The pending starts' table (`pending_starts`, created with the engine's schema). */
export class PendingStarts {
  constructor(
    private readonly sql: Sql,
    private readonly s: string,
  ) {}

  /**
   * Adds an event to its function's pending start. Returns when the start is due, or `full` when
   * a batch reached its size: the caller then takes it at once.
   */
  async add(
    functionId: string,
    deferred: DeferredStart,
    event: EngineEvent,
    eventId: string,
    now: Date,
  ): Promise<{ runAt: Date; full: boolean }> {
    const keyValue = deferred.key?.key({ event }) ?? "";
    const nowMs = now.getTime();
    const firstRunAt = new Date(
      nowMs + Math.min(deferred.periodMs, deferred.timeoutMs ?? Number.POSITIVE_INFINITY),
    );
    const { rows } = await this.sql.query<{ run_at: Date; size: number }>(
      "addPendingStart",
      `INSERT INTO ${this.s}.pending_starts AS p (function_id, key, events, event_ids, first_at, run_at)
       VALUES ($1, $2, jsonb_build_array($3::jsonb), jsonb_build_array($4::text), $5, $6)
       ON CONFLICT (function_id, key) DO UPDATE SET
         events = CASE WHEN $7 THEN jsonb_build_array($3::jsonb) ELSE p.events || jsonb_build_array($3::jsonb) END,
         event_ids = p.event_ids || jsonb_build_array($4::text),
         run_at = CASE WHEN NOT $7 THEN p.run_at
                       WHEN $8::bigint IS NULL THEN $9::timestamptz
                       ELSE least($9::timestamptz, p.first_at + $8::bigint * interval '1 millisecond') END
       RETURNING run_at, jsonb_array_length(events)::int AS size`,
      [
        functionId,
        keyValue,
        JSON.stringify(event),
        eventId,
        now,
        firstRunAt,
        deferred.kind === "debounce",
        deferred.timeoutMs ?? null,
        new Date(nowMs + deferred.periodMs),
      ],
    );
    const row = rows[0];
    if (!row) throw new Error(`pending start of ${functionId} not stored`);
    return {
      runAt: new Date(row.run_at),
      full: deferred.kind === "batch" && row.size >= (deferred.maxSize ?? Number.POSITIVE_INFINITY),
    };
  }

  /** Takes (deletes and returns) the starts due at `now`, and one function's full batch. */
  async takeDue(now: Date, full?: { functionId: string; key: string }): Promise<DueStart[]> {
    const { rows } = await this.sql.query<{
      function_id: string;
      events: EngineEvent[];
      event_ids: string[];
    }>(
      "takeDueStarts",
      `DELETE FROM ${this.s}.pending_starts
       WHERE run_at <= $1 OR (function_id = $2 AND key = $3)
       RETURNING function_id, events, event_ids`,
      [now, full?.functionId ?? null, full?.key ?? null],
    );
    return rows.map((row) => ({ functionId: row.function_id, events: row.events, eventIds: row.event_ids }));
  }

  async earliest(): Promise<Date | undefined> {
    const { rows } = await this.sql.query<{ at: Date | null }>(
      "earliestPendingStart",
      `SELECT min(run_at) AS at FROM ${this.s}.pending_starts`,
    );
    const at = rows[0]?.at;
    return at ? new Date(at) : undefined;
  }

  keyOf(deferred: DeferredStart, event: EngineEvent): string {
    return deferred.key?.key({ event }) ?? "";
  }
}
