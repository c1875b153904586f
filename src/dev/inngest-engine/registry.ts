import { AppError } from "../../errors";
import { compileExpression, ExpressionError, type CompiledExpression } from "./expressions";
import { CronError, parseCron, type CronSchedule } from "./cron";
import { parseDurationMs } from "../../shared/duration";
import { compileDeferredStart, type DeferredStart } from "./flow-control";
import type { ConcurrencySlot, EngineEvent, SdkConcurrency, SdkFunctionConfig } from "./types";

/** Inngest's default when a function sets no `retries`: 3 retries, so 4 attempts. */
const defaultRetries = 3;

/** Options Inngest supports that this engine does not; syncing warns so nobody relies on them. */
const ignoredOptions = ["rateLimit", "throttle", "priority", "timeouts", "singleton"];

export interface EngineFunction {
  id: string;
  appUrl: string;
  /** `steps.step.runtime.url`: the serve() URL with `fnId` and `stepId=step`. */
  url: string;
  maxAttempts: number;
  eventTriggers: { event: string; expression?: CompiledExpression }[];
  crons: CronSchedule[];
  idempotency?: CompiledExpression;
  concurrency: { limit: number; key?: CompiledExpression; scope: string }[];
  cancel: { event: string; expression?: CompiledExpression; timeoutMs?: number }[];
  /** `debounce` or `batchEvents`: an event's run starts later, gathered with others. */
  deferredStart?: DeferredStart;
  ignoredOptions: string[];
  config: SdkFunctionConfig;
}

function compile(fnId: string, what: string, source: string): CompiledExpression {
  try {
    return compileExpression(source);
  } catch (error) {
    if (error instanceof ExpressionError) {
      throw new AppError("validation_failed", `Function "${fnId}" ${what}: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
}

function concurrencyList(value: SdkFunctionConfig["concurrency"]): SdkConcurrency[] {
  if (value === undefined || value === null) return [];
  if (typeof value === "number") return [{ limit: value }];
  return Array.isArray(value) ? value : [value];
}

/** Turns one function config into what the engine runs; throws AppError naming what it refuses. */
export function compileFunction(config: SdkFunctionConfig, appUrl: string): EngineFunction {
  const fnId = config.id;
  if (typeof fnId !== "string" || fnId === "")
    throw new AppError("validation_failed", "A function has no id");
  const step = config.steps?.["step"] ?? Object.values(config.steps ?? {})[0];
  if (!step?.runtime?.url)
    throw new AppError("validation_failed", `Function "${fnId}" has no step runtime URL`);
  const retries = step.retries?.attempts ?? defaultRetries;

  const eventTriggers: EngineFunction["eventTriggers"] = [];
  const crons: CronSchedule[] = [];
  for (const trigger of config.triggers ?? []) {
    if ("cron" in trigger) {
      try {
        crons.push(parseCron(trigger.cron));
      } catch (error) {
        if (error instanceof CronError)
          throw new AppError("validation_failed", `Function "${fnId}": ${error.message}`);
        throw error;
      }
    } else {
      eventTriggers.push({
        event: trigger.event,
        expression: trigger.expression
          ? compile(fnId, `trigger "${trigger.event}"`, trigger.expression)
          : undefined,
      });
    }
  }

  const concurrency = concurrencyList(config.concurrency);
  if (concurrency.length > 2)
    throw new AppError("validation_failed", `Function "${fnId}": at most two concurrency limits`);

  const deferredStart = compileDeferredStart(
    fnId,
    config as { debounce?: unknown; batchEvents?: unknown },
    (what, source) => compile(fnId, what, source),
  );

  return {
    id: fnId,
    appUrl,
    url: step.runtime.url,
    maxAttempts: retries + 1,
    eventTriggers,
    crons,
    idempotency: config.idempotency ? compile(fnId, "idempotency", config.idempotency) : undefined,
    concurrency: concurrency.map((c) => ({
      limit: c.limit,
      scope: c.scope ?? "fn",
      key: c.key ? compile(fnId, "concurrency key", c.key) : undefined,
    })),
    cancel: (config.cancel ?? []).map((c) => {
      const timeoutMs = c.timeout ? parseDurationMs(c.timeout) : undefined;
      if (c.timeout && timeoutMs === undefined) {
        throw new AppError("validation_failed", `Function "${fnId}": bad cancelOn timeout "${c.timeout}"`);
      }
      return {
        event: c.event,
        expression: c.if ? compile(fnId, `cancelOn "${c.event}"`, c.if) : undefined,
        timeoutMs,
      };
    }),
    ...(deferredStart ? { deferredStart } : {}),
    ignoredOptions: ignoredOptions.filter((name) => config[name] !== undefined && config[name] !== null),
    config,
  };
}

/** The concurrency slots a run of `fn` occupies while one of its steps executes. */
export function concurrencySlots(fn: EngineFunction, event: EngineEvent): ConcurrencySlot[] {
  return fn.concurrency
    .filter((c) => c.limit > 0)
    .map((c) => {
      const keyValue = c.key ? (c.key.key({ event }) ?? "") : "";
      // Function scope is per function; env/account scopes share the key across functions.
      const prefix = c.scope === "fn" ? `fn:${fn.id}` : c.scope;
      return { key: `${prefix}:${c.key?.source ?? ""}:${keyValue}`, limit: c.limit };
    });
}

/** The synced functions, indexed for event intake. */
export class FunctionRegistry {
  private readonly byId = new Map<string, EngineFunction>();
  private readonly byEvent = new Map<string, EngineFunction[]>();
  private readonly cancelEvents = new Set<string>();

  get(id: string): EngineFunction | undefined {
    return this.byId.get(id);
  }

  all(): EngineFunction[] {
    return [...this.byId.values()];
  }

  triggeredBy(eventName: string): EngineFunction[] {
    return this.byEvent.get(eventName) ?? [];
  }

  /** Whether any function may be cancelled by this event name. */
  cancelsOn(eventName: string): boolean {
    return this.cancelEvents.has(eventName);
  }

  /** Replaces every function of `appUrl` with `functions`. */
  replaceApp(appUrl: string, functions: EngineFunction[]): void {
    for (const [id, fn] of this.byId) if (fn.appUrl === appUrl) this.byId.delete(id);
    for (const fn of functions) this.byId.set(fn.id, fn);
    this.reindex();
  }

  private reindex(): void {
    this.byEvent.clear();
    this.cancelEvents.clear();
    for (const fn of this.byId.values()) {
      for (const trigger of fn.eventTriggers) {
        const list = this.byEvent.get(trigger.event) ?? [];
        if (!list.includes(fn)) list.push(fn);
        this.byEvent.set(trigger.event, list);
      }
      for (const cancel of fn.cancel) this.cancelEvents.add(cancel.event);
    }
  }
}
