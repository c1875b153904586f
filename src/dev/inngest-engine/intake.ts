import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import type { EngineClock } from "./clock";
import type { KeyedMutex } from "../../shared/keyed-mutex";
import type { EventStore } from "./event-store";
import type { PendingStarts } from "./flow-control";
import { compileExpression, type CompiledExpression } from "./expressions";
import { eventIdFromSeed, ulid } from "./ids";
import type { InternalEvent, RunLifecycle } from "./lifecycle";
import { concurrencySlots, type EngineFunction, type FunctionRegistry } from "./registry";
import type { RunStore } from "./run-store";
import type { EngineEvent, Job, RunContext } from "./types";

/** Event ids and function idempotency keys deduplicate for 24 hours, like Inngest. */
export const dedupeWindowMs = 24 * 3_600_000;

interface IncomingEvent {
  name: string;
  data: Record<string, unknown>;
  id?: string;
  ts?: number;
  v?: string;
}

function parseIncoming(raw: unknown, index: number): IncomingEvent {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new AppError("validation_failed", `Event ${index} is not an object`);
  }
  const record = raw as Record<string, unknown>;
  if (typeof record.name !== "string" || record.name === "") {
    throw new AppError("validation_failed", `Event ${index} has no name`);
  }
  const data = record.data ?? {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new AppError("validation_failed", `Event ${index} ("${record.name}"): data must be an object`);
  }
  if (record.id !== undefined && record.id !== null && typeof record.id !== "string") {
    throw new AppError("validation_failed", `Event ${index} ("${record.name}"): id must be a string`);
  }
  if (record.ts !== undefined && record.ts !== null && typeof record.ts !== "number") {
    throw new AppError(
      "validation_failed",
      `Event ${index} ("${record.name}"): ts must be a number of milliseconds`,
    );
  }
  return {
    name: record.name,
    data: data as Record<string, unknown>,
    id: typeof record.id === "string" && record.id !== "" ? record.id : undefined,
    ts: typeof record.ts === "number" ? record.ts : undefined,
    v: typeof record.v === "string" ? record.v : undefined,
  };
}

/**
 * Everything an arriving event does: dedupe by id, cancel runs (`cancelOn`), resume
 * `waitForEvent` steps, start triggered runs. Cancellation and waits are checked before new
 * runs start, so a run is never cancelled or resumed by the event that started it.
 */
export class EventIntake {
  private readonly waitedNames = new Set<string>();
  private readonly expressionCache = new Map<string, CompiledExpression>();
  /** Intake calls in progress; drain() waits for them. */
  pending = 0;

  constructor(
    private readonly deps: {
      logger: Logger;
      clock: EngineClock;
      runs: RunStore;
      events: EventStore;
      registry: FunctionRegistry;
      lifecycle: RunLifecycle;
      runLocks: KeyedMutex;
      wake: () => void;
      /**
       * The executor, for a new run's first call: when it has room, the run is created with
       * that job already claimed and handed over, instead of being claimed and loaded again.
       */
      executeNow: { hasRoom(): boolean; start(job: Job, run: RunContext): void };
      /** Runs whose start `debounce` or `batchEvents` delays. */
      pendingStarts: PendingStarts;
      /** A pending start comes due at `at`: the scheduler arms its timer. */
      noteStartAt: (at: Date) => void;
    },
  ) {}

  async loadWaitedNames(): Promise<void> {
    for (const name of await this.deps.runs.waitedEventNames()) this.waitedNames.add(name);
  }

  /** Called before a waitForEvent job is stored, so no matching event can slip past. */
  noteWait(eventName: string): void {
    this.waitedNames.add(eventName);
  }

  /** The event API: returns one internal id per event, in order. */
  async ingest(raw: unknown, seed?: string): Promise<string[]> {
    const list = Array.isArray(raw) ? raw : [raw];
    const incoming = list.map(parseIncoming);
    this.pending++;
    try {
      const ids: string[] = [];
      for (const [index, event] of incoming.entries()) ids.push(await this.ingestOne(event, seed, index));
      return ids;
    } finally {
      this.pending--;
    }
  }

  async emit(events: InternalEvent[]): Promise<void> {
    if (events.length > 0) await this.ingest(events);
  }

  private async ingestOne(incoming: IncomingEvent, seed: string | undefined, index: number): Promise<string> {
    const { clock, events, logger } = this.deps;
    const nowMs = clock.nowMs();
    const now = new Date(nowMs);
    const internalId = (seed ? eventIdFromSeed(seed, index) : undefined) ?? ulid(nowMs);
    const event: EngineEvent = {
      id: incoming.id ?? internalId,
      name: incoming.name,
      data: incoming.data,
      ts: incoming.ts ?? nowMs,
      ...(incoming.v ? { v: incoming.v } : {}),
    };
    const toStart = this.deps.registry
      .triggeredBy(event.name)
      .filter((fn) =>
        fn.eventTriggers.some(
          (trigger) =>
            trigger.event === event.name && (!trigger.expression || trigger.expression.matches({ event })),
        ),
      );
    const matchesRuns = this.deps.registry.cancelsOn(event.name) || this.waitedNames.has(event.name);
    // Stored as untriggered while it has work to do: if this delivery fails half-way (its
    // sender sees an error and retries with the same ids), the retry does the rest, so every
    // stored event gets its runs, as on Inngest, where an accepted event is always processed.
    const intake = await events.saveEvent({
      internalId,
      userId: incoming.id,
      payload: event,
      now,
      dedupeUntil: new Date(nowMs + dedupeWindowMs),
      triggered: toStart.length === 0 && !matchesRuns,
    });
    if (intake !== "accepted") {
      logger.debug({ name: event.name, id: incoming.id, intake }, "event not processed again");
      return internalId;
    }
    await this.applyCancellations(event);
    await this.resumeWaits(event);
    const deferred = toStart.filter((fn) => this.isDeferred(fn, event));
    const immediate = toStart.filter((fn) => !deferred.includes(fn));
    for (const fn of deferred) await this.deferStart(fn, event, internalId);
    // The last run's statement also marks the event done (no statement of its own).
    for (const [index, fn] of immediate.entries())
      await this.startRun(fn, event, internalId, index === immediate.length - 1);
    if (immediate.length === 0 && (matchesRuns || deferred.length > 0))
      await events.markTriggered(internalId);
    return internalId;
  }

  /** Debounced, or batched (a batch's `if` decides which events it takes). */
  private isDeferred(fn: EngineFunction, event: EngineEvent): boolean {
    const deferred = fn.deferredStart;
    if (!deferred) return false;
    return deferred.kind === "debounce" || !deferred.if || deferred.if.matches({ event });
  }

  private async deferStart(fn: EngineFunction, event: EngineEvent, internalId: string): Promise<void> {
    const deferred = fn.deferredStart;
    if (!deferred) return;
    const now = this.deps.clock.now();
    const { runAt, full } = await this.deps.pendingStarts.add(fn.id, deferred, event, internalId, now);
    this.deps.logger.debug({ functionId: fn.id, event: event.name, runAt, full }, "run start deferred");
    if (full) {
      await this.startDeferred(now, {
        functionId: fn.id,
        key: this.deps.pendingStarts.keyOf(deferred, event),
      });
    } else this.deps.noteStartAt(runAt);
  }

  /**
   * Starts the deferred runs due at `now` (and a full batch): a debounce with its last event, a
   * batch with all of its events, `event` being the first. Returns how many started.
   */
  async startDeferred(now: Date, full?: { functionId: string; key: string }): Promise<number> {
    const due = await this.deps.pendingStarts.takeDue(now, full);
    for (const start of due) {
      const fn = this.deps.registry.get(start.functionId);
      if (!fn) {
        this.deps.logger.warn(
          { functionId: start.functionId },
          "deferred start of a function no longer synced dropped",
        );
        continue;
      }
      const events = fn.deferredStart?.kind === "debounce" ? start.events.slice(-1) : start.events;
      const first = events[0];
      const eventId = fn.deferredStart?.kind === "debounce" ? start.eventIds.at(-1) : start.eventIds[0];
      if (!first || !eventId) continue;
      await this.startRun(fn, first, eventId, false, events);
    }
    return due.length;
  }

  async startRun(
    fn: EngineFunction,
    event: EngineEvent,
    eventInternalId: string,
    markEventTriggered = false,
    events: EngineEvent[] = [event],
  ): Promise<string | undefined> {
    const nowMs = this.deps.clock.nowMs();
    const runId = ulid(nowMs);
    const idempotencyKey = fn.idempotency?.key({ event });
    const concurrency = concurrencySlots(fn, event);
    const executeNow = this.deps.executeNow.hasRoom();
    const now = new Date(nowMs);
    const { created, jobId } = await this.deps.runs.createRun(
      {
        id: runId,
        functionId: fn.id,
        eventId: eventInternalId,
        event,
        events,
        maxAttempts: fn.maxAttempts,
        concurrency,
        idempotency:
          idempotencyKey === undefined
            ? undefined
            : { key: idempotencyKey, expiresAt: new Date(nowMs + dedupeWindowMs) },
        cancellations: fn.cancel.map((cancel) => ({
          eventName: cancel.event,
          expression: cancel.expression?.source ?? null,
          expiresAt: cancel.timeoutMs === undefined ? null : new Date(nowMs + cancel.timeoutMs),
        })),
      },
      now,
      executeNow,
      markEventTriggered,
    );
    if (!created) {
      this.deps.logger.debug(
        { functionId: fn.id, idempotencyKey },
        "run skipped: idempotency key already used",
      );
      return undefined;
    }
    this.deps.logger.debug({ runId, functionId: fn.id, event: event.name }, "run started");
    if (executeNow && jobId) {
      this.deps.executeNow.start(
        {
          id: jobId,
          runId,
          kind: "call",
          stepId: "step",
          stepName: null,
          attempt: 0,
          runAt: now,
          eventName: null,
          expression: null,
        },
        {
          id: runId,
          functionId: fn.id,
          status: "Running",
          event,
          events,
          maxAttempts: fn.maxAttempts,
          concurrency,
          steps: new Map(),
        },
      );
    } else this.deps.wake();
    return runId;
  }

  private async applyCancellations(event: EngineEvent): Promise<void> {
    if (!this.deps.registry.cancelsOn(event.name)) return;
    const candidates = await this.deps.runs.findCancellations(event.name, this.deps.clock.now());
    const emitted: InternalEvent[] = [];
    const cancelled = new Set<string>();
    for (const candidate of candidates) {
      if (cancelled.has(candidate.runId)) continue;
      if (!this.matches(candidate.expression, candidate.runEvent, event)) continue;
      cancelled.add(candidate.runId);
      const notice = await this.deps.runLocks.run(candidate.runId, () =>
        this.deps.lifecycle.cancel(candidate.runId, { reason: "cancelOn", byEvent: event.name }),
      );
      if (notice) emitted.push(notice);
    }
    await this.emit(emitted);
  }

  private async resumeWaits(event: EngineEvent): Promise<void> {
    if (!this.waitedNames.has(event.name)) return;
    for (const wait of await this.deps.runs.findWaits(event.name)) {
      if (!this.matches(wait.expression, wait.runEvent, event)) continue;
      const { found } = await this.deps.runLocks.run(wait.runId, () =>
        this.deps.runs.advanceRun({
          jobId: wait.jobId,
          runId: wait.runId,
          results: [{ id: wait.stepId, name: wait.stepName, op: "WaitForEvent", result: { data: event } }],
          newJobs: [],
          now: this.deps.clock.now(),
          claimDiscovery: false,
        }),
      );
      if (found) this.deps.wake();
    }
  }

  /** `if` expressions see the run's trigger as `event` and the arriving event as `async`. */
  private matches(expression: string | null, runEvent: EngineEvent, incoming: EngineEvent): boolean {
    if (!expression) return true;
    let compiled = this.expressionCache.get(expression);
    if (!compiled) {
      try {
        compiled = compileExpression(expression);
      } catch (error) {
        this.deps.logger.warn(
          { err: error, expression },
          "stored expression no longer compiles; treating as no match",
        );
        return false;
      }
      this.expressionCache.set(expression, compiled);
    }
    return compiled.matches({ event: runEvent, async: incoming });
  }
}
