import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type ErrorRequestHandler, type Request } from "express";
import { AppError, isAppError } from "../../errors";
import type { Logger } from "../../logger";
import type { CheckpointBody, Checkpoints } from "./checkpoint";
import type { EngineClock } from "./clock";
import type { EventStore, StoredEvent } from "./event-store";
import type { EventIntake } from "./intake";
import type { InternalEvent, RunLifecycle } from "./lifecycle";
import type { KeyedMutex } from "../../shared/keyed-mutex";
import type { FunctionRegistry } from "./registry";
import type { PendingJobRow, RunRow, RunStore, StepRow } from "./run-store";
import type { AppSync } from "./sync";
import type { SdkFunctionConfig } from "./types";

export interface ApiDeps {
  logger: Logger;
  runs: RunStore;
  events: EventStore;
  intake: EventIntake;
  lifecycle: RunLifecycle;
  runLocks: KeyedMutex;
  registry: FunctionRegistry;
  sync: AppSync;
  checkpoints: Checkpoints;
  clock: EngineClock;
}

function runView(run: RunRow) {
  return {
    run_id: run.id,
    function_id: run.function_id,
    status: run.status,
    output: run.output ?? null,
    error: run.error ?? null,
    event_id: run.event_id,
    event: run.event,
    started_at: run.started_at,
    ended_at: run.ended_at,
  };
}

function stepView(step: StepRow) {
  const failed = "error" in step.result;
  return {
    id: step.id,
    name: step.name,
    op: step.op,
    status: failed ? "Failed" : "Completed",
    output: "data" in step.result ? step.result.data : null,
    error: "error" in step.result ? step.result.error : null,
    completed_at: step.completed_at,
    // Reported by the SDK (checkpointed steps and classic StepRun ops alike).
    started_at: step.started_at,
    duration_ms: step.duration_ms,
  };
}

function pendingView(job: PendingJobRow) {
  return {
    kind: job.kind,
    step_id: job.step_id,
    name: job.step_name,
    attempt: job.attempt,
    run_at: job.run_at,
    event: job.event_name,
  };
}

function eventView(event: StoredEvent) {
  return {
    internal_id: event.internal_id,
    id: event.payload.id,
    name: event.name,
    data: event.payload.data,
    ts: event.payload.ts,
    received_at: event.received_at,
    deduplicated: event.deduplicated,
  };
}

function limitParam(req: Request): number {
  const limit = Number(req.query.limit ?? 1000);
  return Number.isInteger(limit) && limit > 0 ? Math.min(limit, 10_000) : 1000;
}

function stringParam(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The HTTP face of the engine: Inngest's event API (`POST /e/:key`), out-of-band sync
 * (`POST /fn/register`) and the run-inspection REST API (`/v1/...`), plus debug listings.
 */
export function createApi(deps: ApiDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  // Runs carry their whole memoised state; events and sync payloads can be large too.
  app.use(express.json({ limit: "10mb", type: () => true }));

  app.get("/v1/health", (_req, res) => {
    res.json({ status: "ok" });
  });

  app.post("/e/:key", async (req, res) => {
    const seed = req.header("x-inngest-event-id-seed");
    const ids = await deps.intake.ingest(req.body, seed);
    res.json({ ids, status: 200 });
  });

  // Async checkpointing (SDK v4 default), and the legacy path Inngest still mounts.
  const checkpoint: express.RequestHandler = async (req, res) => {
    deps.checkpoints.authorize(req.header("authorization"));
    const runId = String(req.params.runId);
    await deps.checkpoints.accept(runId, (req.body ?? {}) as CheckpointBody, Date.now(), deps.clock.now());
    res.json({});
  };
  app.post("/v1/checkpoint/:runId/async", checkpoint);
  app.post("/v1/http/runs/:runId/async", checkpoint);

  app.post("/fn/register", async (req, res) => {
    const body = (req.body ?? {}) as { url?: unknown; appName?: unknown; functions?: unknown };
    if (typeof body.url !== "string" || !Array.isArray(body.functions)) {
      res.status(400).json({ status: 400, error: "Expected {url, appName, functions}" });
      return;
    }
    try {
      // With a signing key the SDK authenticates with its hashed key, as Inngest's API checks.
      deps.checkpoints.authorize(req.header("authorization"));
      await deps.sync.register({
        url: body.url,
        appId: typeof body.appName === "string" ? body.appName : "",
        functions: body.functions as SdkFunctionConfig[],
      });
    } catch (error) {
      // The SDK reads `error` as the message of a failed registration.
      if (isAppError(error)) {
        res.status(error.httpStatus).json({ status: error.httpStatus, error: error.message });
        return;
      }
      throw error;
    }
    res.json({ status: 200, ok: true, modified: true });
  });

  app.get("/v1/functions", (_req, res) => {
    res.json({
      data: deps.registry.all().map((fn) => ({
        id: fn.id,
        app_url: fn.appUrl,
        url: fn.url,
        max_attempts: fn.maxAttempts,
        triggers: fn.config.triggers ?? [],
        ignored_options: fn.ignoredOptions,
      })),
    });
  });

  app.get("/v1/events", async (req, res) => {
    const { events, received, accepted } = await deps.events.listEvents({
      name: stringParam(req.query.name),
      limit: limitParam(req),
    });
    res.json({ data: events.map(eventView), received, accepted });
  });

  app.get("/v1/events/:id", async (req, res) => {
    const event = await deps.events.getEvent(req.params.id);
    if (!event) throw new AppError("not_found", `No event ${req.params.id}`);
    res.json({ data: eventView(event) });
  });

  app.get("/v1/events/:id/runs", async (req, res) => {
    const runs = await deps.runs.listRuns({ eventId: req.params.id, limit: limitParam(req) });
    res.json({ data: runs.map(runView) });
  });

  app.get("/v1/runs", async (req, res) => {
    const runs = await deps.runs.listRuns({
      functionId: stringParam(req.query.function_id),
      status: stringParam(req.query.status),
      eventId: stringParam(req.query.event_id),
      // An order's runs, ours and a shop's (docs/lifecycle-events.md): Inngest's run search by event data.
      orderId: stringParam(req.query.order_id),
      limit: limitParam(req),
    });
    res.json({ data: runs.map(runView) });
  });

  app.get("/v1/runs/:id", async (req, res) => {
    const found = await deps.runs.getRun(req.params.id);
    if (!found) throw new AppError("not_found", `No run ${req.params.id}`);
    res.json({
      data: {
        ...runView(found.run),
        steps: found.steps.map(stepView),
        pending: found.pending.map(pendingView),
      },
    });
  });

  app.delete("/v1/runs/:id", async (req, res) => {
    const runId = req.params.id;
    const notice: InternalEvent | undefined = await deps.runLocks.run(runId, () =>
      deps.lifecycle.cancel(runId, { reason: "cancelled through the REST API" }),
    );
    if (notice) await deps.intake.emit([notice]);
    const found = await deps.runs.getRun(runId);
    if (!found) throw new AppError("not_found", `No run ${runId}`);
    res.json({ data: runView(found.run) });
  });

  // Unknown paths fall through (next), so the engine can be mounted inside another app.
  app.use(errorHandler(deps.logger));
  return app;
}

const checkpointPath = /^\/v1\/(?:checkpoint|http\/runs)\/([^/?]+)\/async(?:\?.*)?$/;
/** Larger checkpoints (or chunked, compressed, non-JSON ones) take the express route. */
const fastCheckpointMaxBytes = 1_000_000;

/**
 * `POST /v1/checkpoint/:runId/async` on the engine's own server, without express: the SDK
 * POSTs one per step (several per run), and express's router and body parser cost more CPU
 * than the checkpoint itself. Same answers as the express route (which still serves the engine
 * when it is mounted in another app, and every request this one declines); returns false, having
 * touched nothing, for a request it leaves to express.
 */
export function checkpointFastPath(deps: {
  checkpoints: Checkpoints;
  clock: EngineClock;
  logger: Logger;
}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const reply = (res: ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  };
  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown): void => {
    if (isAppError(error) && error.httpStatus < 500) {
      reply(res, error.httpStatus, { error: { code: error.code, message: error.message } });
      return;
    }
    deps.logger.error({ err: error, method: req.method, path: req.url }, "local engine request failed");
    reply(res, isAppError(error) ? error.httpStatus : 500, {
      error: {
        code: isAppError(error) ? error.code : "internal_error",
        message: "The local engine failed; see its log",
      },
    });
  };
  return (req, res) => {
    if (req.method !== "POST") return false;
    const match = checkpointPath.exec(req.url ?? "");
    const length = Number(req.headers["content-length"]);
    const type = req.headers["content-type"];
    const encoding = req.headers["content-encoding"];
    if (
      !match?.[1] ||
      !Number.isInteger(length) ||
      length > fastCheckpointMaxBytes ||
      (encoding !== undefined && encoding !== "identity") ||
      (type !== undefined && !/^application\/json\s*(;\s*charset=utf-8\s*)?$/i.test(type))
    )
      return false;
    let runId: string;
    try {
      runId = decodeURIComponent(match[1]);
    } catch {
      return false;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        // As express.json (strict): an empty body is {}, anything but an object or array is refused.
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = {};
        if (text.trim() !== "") {
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          if (typeof body !== "object" || body === null) {
            reply(res, 400, { error: { code: "invalid_json", message: "Request body is not valid JSON" } });
            return;
          }
        }
        deps.checkpoints.authorize(req.headers.authorization);
        await deps.checkpoints.accept(runId, body as CheckpointBody, Date.now(), deps.clock.now());
        reply(res, 200, {});
      })().catch((error: unknown) => fail(req, res, error));
    });
    return true;
  };
}

/** For the engine's own server: unknown paths get a JSON 404 instead of falling through. */
export function standaloneServer(handler: express.Express, logger: Logger): express.Express {
  const server = express();
  server.disable("x-powered-by");
  server.use(handler);
  server.use((req, _res, next) =>
    next(new AppError("route_not_found", `No route for ${req.method} ${req.path}`)),
  );
  server.use(errorHandler(logger));
  return server;
}

function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    if (isAppError(error) && error.httpStatus < 500) {
      res.status(error.httpStatus).json({ error: { code: error.code, message: error.message } });
      return;
    }
    const parseFailure =
      typeof error === "object" &&
      error !== null &&
      (error as { type?: unknown }).type === "entity.parse.failed";
    if (parseFailure) {
      res.status(400).json({ error: { code: "invalid_json", message: "Request body is not valid JSON" } });
      return;
    }
    logger.error({ err: error, method: req.method, path: req.path }, "local engine request failed");
    const status = isAppError(error) ? error.httpStatus : 500;
    res.status(status).json({
      error: {
        code: isAppError(error) ? error.code : "internal_error",
        message: "The local engine failed; see its log",
      },
    });
  };
}
