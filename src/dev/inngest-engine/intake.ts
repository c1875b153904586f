import { AppError } from "../../errors";
import type { Logger } from "../../logger";
import type { EngineClock } from "./clock";
import type { KeyedMutex } from "../../shared/keyed-mutex";
import type { EventStore } from "./event-store";
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
    // The last run's statement also marks the event done (no statement of its own).
    for (const [index, fn] of toStart.entries())
      await this.startRun(fn, event, internalId, index === toStart.length - 1);
    if (toStart.length === 0 && matchesRuns) await events.markTriggered(internalId);
    return internalId;
  }

  async startRun(
    fn: EngineFunction,
    event: EngineEvent,
    eventInternalId: string,
    markEventTriggered = false,
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
        events: [event],
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
          events: [event],
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
