import type { AppResponse } from "./app-client";
import type { Job, RunContext, SdkOp, SerializedError } from "./types";

/** What one call to the app came back with. */
export type CallOutcome =
  | { kind: "completed"; output: unknown }
  | { kind: "ops"; ops: SdkOp[]; retryAfter?: string }
  | { kind: "error"; retriable: boolean; error: SerializedError; retryAfter?: string }
  | { kind: "stopped" };

/** What makes a discovery call a checkpointing one (Inngest's `ctx.fn_id` + `ctx.qi_id`). */
export interface CheckpointingCtx {
  fnId: string;
  qiId: string;
  requestId: string;
  generation: number;
}

/**
 * The body of `POST <serve>?fnId=..&stepId=..`. With `checkpointing` (discovery calls only, as
 * Inngest does once parallelism has ended) the SDK runs steps back to back in this one request
 * and POSTs each result to `/v1/checkpoint/:runId/async`; without it, it runs one step per call.
 */
export function callBody(run: RunContext, job: Job, checkpointing?: CheckpointingCtx): unknown {
  const stack = [...run.steps.keys()];
  return {
    event: run.event,
    events: run.events,
    steps: Object.fromEntries(run.steps),
    ctx: {
      run_id: run.id,
      attempt: job.attempt,
      max_attempts: run.maxAttempts,
      ...(checkpointing
        ? {
            fn_id: checkpointing.fnId,
            qi_id: checkpointing.qiId,
            request_id: checkpointing.requestId,
            generation_id: checkpointing.generation,
          }
        : {}),
      // A planned (parallel) step or a step retry must run only that step.
      disable_immediate_execution: job.stepId !== "step",
      use_api: false,
      stack: { stack, current: Math.max(0, stack.length - 1) },
    },
    version: 2,
  };
}

export function callUrl(functionUrl: string, functionId: string, stepId: string): string {
  const url = new URL(functionUrl);
  url.searchParams.set("fnId", functionId);
  url.searchParams.set("stepId", stepId);
  return url.toString();
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === "") return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function header(response: AppResponse, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Any error-ish JSON from the SDK or a proxy, as `{name, message, stack?}`. */
export function normalizeError(value: unknown, fallback: string): SerializedError {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const message =
      typeof record.message === "string"
        ? record.message
        : typeof record.error === "string"
          ? record.error
          : fallback;
    return {
      ...record,
      name: typeof record.name === "string" ? record.name : "Error",
      message,
      ...(typeof record.stack === "string" ? { stack: record.stack } : {}),
    };
  }
  return { name: "Error", message: typeof value === "string" && value !== "" ? value : fallback };
}

function isOp(value: unknown): value is SdkOp {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as SdkOp).id === "string" &&
    typeof (value as SdkOp).op === "string"
  );
}

/** 200 = finished, 206 = ops, 400 or `x-inngest-no-retry: true` = final error, others retriable. */
export function interpretResponse(response: AppResponse): CallOutcome {
  const retryAfter = header(response, "retry-after");
  const body = parseJson(response.body);
  if (response.status === 200) return { kind: "completed", output: body.ok ? body.value : response.body };
  if (response.status === 206 && body.ok) {
    const ops = Array.isArray(body.value) ? body.value : [body.value];
    if (ops.every(isOp)) return { kind: "ops", ops, retryAfter };
  }
  const noRetry = header(response, "x-inngest-no-retry");
  const retriable = noRetry === "true" ? false : noRetry === "false" ? true : response.status !== 400;
  const error = normalizeError(
    body.ok ? body.value : response.body,
    `The app answered HTTP ${response.status}`,
  );
  return { kind: "error", retriable, error, retryAfter };
}
