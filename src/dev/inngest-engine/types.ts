/** Shapes shared by the local engine's modules: what the SDK sends us and what we keep. */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** An event as functions receive it (`event` / `events[i]` in the call body). */
export interface EngineEvent {
  id: string;
  name: string;
  data: Record<string, unknown>;
  ts: number;
  v?: string;
}

export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  [key: string]: unknown;
}

/** What a memoised step holds; sent back to the SDK verbatim under `steps[<hash>]`. */
export type StepResult = { data: unknown } | { error: SerializedError };

/** One function as `serve()` describes it when syncing (`getConfig()` in the SDK). */
export interface SdkFunctionConfig {
  id: string;
  name?: string;
  triggers?: ({ event: string; expression?: string } | { cron: string; jitter?: string })[];
  steps: Record<
    string,
    { id: string; name: string; runtime: { type: string; url: string }; retries?: { attempts?: number } }
  >;
  idempotency?: string;
  concurrency?: number | SdkConcurrency | SdkConcurrency[];
  cancel?: { event: string; if?: string; timeout?: string }[];
  [other: string]: unknown;
}

export interface SdkConcurrency {
  limit: number;
  key?: string;
  scope?: "fn" | "env" | "account";
}

/** An op in a 206 reply. Only the fields the engine reads are typed. */
export interface SdkOp {
  id: string;
  op: string;
  name?: string;
  displayName?: string;
  data?: unknown;
  error?: SerializedError;
  opts?: Record<string, unknown>;
  /** `{a: start ns since epoch, b: duration ns}` on executed steps. */
  timing?: { a?: unknown; b?: unknown };
}

export type RunStatus = "Running" | "Completed" | "Failed" | "Cancelled";

export type JobKind = "call" | "sleep" | "wait";

/** A unit of pending work for a run: call the app, end a sleep, or time out a wait. */
export interface Job {
  id: string;
  runId: string;
  kind: JobKind;
  /** "step" for discovery, otherwise the hashed step id. */
  stepId: string;
  stepName: string | null;
  attempt: number;
  runAt: Date;
  eventName: string | null;
  expression: string | null;
}

export interface ConcurrencySlot {
  key: string;
  limit: number;
}

/** A run as the executor needs it for one call. */
export interface RunContext {
  id: string;
  functionId: string;
  status: RunStatus;
  event: EngineEvent;
  events: EngineEvent[];
  maxAttempts: number;
  concurrency: ConcurrencySlot[];
  /** Memoised results in completion order (the order is the `stack`). */
  steps: Map<string, StepResult>;
}
