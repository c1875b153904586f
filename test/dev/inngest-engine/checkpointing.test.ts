import http from "node:http";
import type { AddressInfo } from "node:net";
import { hashedSigningKey } from "../../../src/dev/inngest-engine/checkpoint";
import { Harness, type RunView } from "./fixtures/harness";

/**
 * The local engine speaks Inngest's async checkpointing. With `ctx.fn_id` and `ctx.qi_id` on a discovery call
 * the SDK (v4) runs steps back to back inside that one request and POSTs each result to
 * `/v1/checkpoint/:runId/async`.
 */

interface Gate {
  promise: Promise<void>;
  open: () => void;
}
function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const executed: Record<string, number> = {};
const ran = (key: string): void => {
  executed[key] = (executed[key] ?? 0) + 1;
};
const failedOnce = new Set<string>();
let blocker = gate();
let blockerReached = gate();

const functions: Parameters<typeof Harness.start>[0]["functions"] = (inngest) => [
  inngest.createFunction(
    { id: "three-steps", triggers: [{ event: "test/three" }] },
    async ({ step, event }) => {
      const tag = (event.data as { tag: string }).tag;
      const a = await step.run("first", () => {
        ran(`${tag}:first`);
        return 1;
      });
      const b = await step.run("second", () => {
        ran(`${tag}:second`);
        return a + 1;
      });
      const c = await step.run("third", () => {
        ran(`${tag}:third`);
        return b + 1;
      });
      return { sum: a + b + c };
    },
  ),
  inngest.createFunction({ id: "fan-out", triggers: [{ event: "test/fan" }] }, async ({ step }) => {
    const parts = await Promise.all(["x", "y"].map((id) => step.run(`part-${id}`, () => id)));
    const joined = await step.run("join", () => parts.join("+"));
    const after = await step.run("after", () => `${joined}!`);
    return after;
  }),
  inngest.createFunction(
    { id: "blocking", retries: 2, triggers: [{ event: "test/block" }] },
    async ({ step, attempt, event }) => {
      const failFirst = (event.data as { failFirst?: string }).failFirst;
      if (failFirst && attempt === 0 && !failedOnce.has(failFirst)) {
        failedOnce.add(failFirst);
        throw new Error("the function fails once before any step");
      }
      await step.run("wait-for-gate", async () => {
        blockerReached.open();
        await blocker.promise;
        return "released";
      });
      return "done";
    },
  ),
];

async function sendOne(harness: Harness, name: string, data: Record<string, unknown>): Promise<RunView> {
  const [eventId] = await harness.send({ name, data });
  return harness.onlyRunOf(eventId as string);
}

async function postCheckpoint(
  harness: Harness,
  runId: string,
  body: Record<string, unknown>,
  path = "checkpoint",
  authorization?: string,
): Promise<number> {
  const url =
    path === "checkpoint"
      ? `${harness.engineUrl}/v1/checkpoint/${runId}/async`
      : `${harness.engineUrl}/v1/http/runs/${runId}/async`;
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ run_id: runId, ...body }),
  });
  return res.status;
}

describe("local Inngest engine: async checkpointing", () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await Harness.start({ functions });
  });
  afterAll(async () => {
    await harness.stop();
  });

  test("a sequential run takes one serve() call and checkpoints each step; RunComplete comes in the 206", async () => {
    const callsBefore = harness.calls.length;
    const checkpointsBefore = harness.engine.stats().checkpoints;
    const run = await sendOne(harness, "test/three", { tag: "seq" });
    expect(run.status).toBe("Completed");
    expect(run.output).toEqual({ sum: 6 });
    expect(executed).toMatchObject({ "seq:first": 1, "seq:second": 1, "seq:third": 1 });
    // Fails if the engine stops sending fn_id: the SDK would then answer one step per call.
    const calls = harness.calls.slice(callsBefore);
    expect(calls).toHaveLength(1);
    expect(harness.engine.stats().checkpoints - checkpointsBefore).toBe(3);

    const ctx = calls[0]?.body.ctx ?? {};
    expect(calls[0]?.query.stepId).toBe("step");
    expect(ctx.fn_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(typeof ctx.qi_id).toBe("string");
    expect(ctx.request_id).toBe(calls[0]?.headers["x-request-id"]);
    expect(String(ctx.generation_id)).toBe(calls[0]?.headers["x-inngest-generation-id"]);
    expect(ctx.disable_immediate_execution).toBe(false);

    // The REST view shows the checkpointed steps in order, with the SDK's timings.
    expect(run.steps?.map((s) => [s.name, s.op, s.status, s.output])).toEqual([
      ["first", "StepRun", "Completed", 1],
      ["second", "StepRun", "Completed", 2],
      ["third", "StepRun", "Completed", 3],
    ]);
    for (const step of (run.steps ?? []) as unknown as { started_at: string; duration_ms: number }[]) {
      expect(Number.isNaN(Date.parse(step.started_at))).toBe(false);
      expect(step.duration_ms).toBeGreaterThanOrEqual(0);
    }
  });

  test("parallel steps are planned and run one per call without fn_id; checkpointing resumes after them", async () => {
    const callsBefore = harness.calls.length;
    const run = await sendOne(harness, "test/fan", {});
    expect(run.status).toBe("Completed");
    expect(run.output).toBe("x+y!");
    const calls = harness.calls.slice(callsBefore);
    const planned = calls.filter((call) => call.query.stepId !== "step");
    expect(planned).toHaveLength(2);
    for (const call of planned) {
      expect(call.body.ctx?.fn_id).toBeUndefined();
      expect(call.body.ctx?.disable_immediate_execution).toBe(true);
    }
    // Discovery calls: the first plans the two parts, the next runs join and after inline.
    const discoveries = calls.filter((call) => call.query.stepId === "step");
    expect(discoveries).toHaveLength(2);
    expect(discoveries.every((call) => typeof call.body.ctx?.fn_id === "string")).toBe(true);
    expect(run.steps?.map((s) => s.name)).toEqual(
      expect.arrayContaining(["part-x", "part-y", "join", "after"]),
    );
  });

  test("StepRun is memoised idempotently in arrival order, StepPlanned ignored, other opcodes refused with 400", async () => {
    blocker = gate();
    blockerReached = gate();
    const [eventId] = await harness.send({ name: "test/block", data: {} });
    await blockerReached.promise;
    const runs = await eventually(async () => {
      const found = await harness.runsOf(eventId as string);
      if (found.length !== 1) throw new Error("no run yet");
      return found;
    });
    const runId = (runs[0] as RunView).run_id;
    const op = (id: string, data: unknown, extra: Record<string, unknown> = {}) => ({
      id,
      op: "StepRun",
      name: id,
      displayName: id,
      data,
      timing: { a: Date.now() * 1e6, b: 2e6 },
      ...extra,
    });
    expect(
      await postCheckpoint(harness, runId, {
        steps: [op("z-first", 1), { id: "planned", op: "StepPlanned" }, op("a-second", 2)],
      }),
    ).toBe(200);
    // The same id again (a retried POST) changes nothing; the legacy path is served too.
    expect(await postCheckpoint(harness, runId, { steps: [op("z-first", 99)] }, "legacy")).toBe(200);
    expect(await postCheckpoint(harness, runId, { steps: [{ id: "s", op: "Sleep", name: "1h" }] })).toBe(400);
    expect(await postCheckpoint(harness, runId, { steps: [{ id: "r", op: "RunComplete", data: 1 }] })).toBe(
      400,
    );
    expect(await postCheckpoint(harness, "01NOSUCHRUN0000000000000000", { steps: [op("x", 1)] })).toBe(404);

    const during = await harness.run(runId);
    expect(during.steps?.map((s) => [s.id, s.output])).toEqual([
      ["z-first", 1],
      ["a-second", 2],
    ]);
    blocker.open();
    const after = await harness.onlyRunOf(eventId as string);
    expect(after.status).toBe("Completed");
    expect(after.steps?.map((s) => s.name)).toEqual(["z-first", "a-second", "wait-for-gate"]);
  });

  test("a checkpoint resets the attempt budget of the call it belongs to", async () => {
    blocker = gate();
    blockerReached = gate();
    const callsBefore = harness.calls.length;
    const [eventId] = await harness.send({ name: "test/block", data: { failFirst: "reset" } });
    await harness.engine.drain();
    harness.clock.shift(5_000); // past the retry backoff of the failed first attempt
    await blockerReached.promise;
    const retry = harness.calls.slice(callsBefore).find((call) => call.body.ctx?.attempt === 1);
    expect(retry).toBeDefined();
    const runId = String(retry?.body.ctx?.run_id);
    const pendingAttempt = async () =>
      (await harness.run(runId)).pending?.map((p) => (p as { attempt?: number }).attempt);
    expect(await pendingAttempt()).toEqual([1]);
    expect(
      await postCheckpoint(harness, runId, {
        qi_id: retry?.body.ctx?.qi_id ?? Buffer.from("0::local").toString("base64"),
        steps: [{ id: "checkpointed", op: "StepRun", name: "checkpointed", data: true }],
      }),
    ).toBe(200);
    expect(await pendingAttempt()).toEqual([0]);
    blocker.open();
    const run = await harness.onlyRunOf(eventId as string);
    expect(run.status).toBe("Completed");
  });

  test("a stale generation gets 409", async () => {
    blocker = gate();
    blockerReached = gate();
    const callsBefore = harness.calls.length;
    const [eventId] = await harness.send({ name: "test/block", data: {} });
    await blockerReached.promise;
    const call = harness.calls.slice(callsBefore)[0];
    const ctx = call?.body.ctx ?? {};
    const runId = String(ctx.run_id);
    const base = { qi_id: ctx.qi_id, request_started_at: Date.now() - 60_000, steps: [] };
    const generation = Number(ctx.generation_id);
    expect(await postCheckpoint(harness, runId, { ...base, generation_id: generation - 1 })).toBe(409);
    expect(await postCheckpoint(harness, runId, { ...base, generation_id: generation })).toBe(200);
    // The engine knows its dispatches: another generation in flight is stale even when fresh.
    expect(
      await postCheckpoint(harness, runId, { ...base, request_started_at: Date.now(), generation_id: 1 }),
    ).toBe(409);
    // Without a generation there is nothing to check, as on Inngest.
    expect(await postCheckpoint(harness, runId, { ...base, generation_id: 0 })).toBe(200);
    blocker.open();
    expect((await harness.onlyRunOf(eventId as string)).status).toBe("Completed");
  });
});

describe("local Inngest engine: classic mode (LOCAL_ENGINE_CHECKPOINTING=false)", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await Harness.start({ functions, engine: { checkpointing: false } });
  });
  afterAll(async () => {
    await harness.stop();
  });

  test("without fn_id the SDK runs one step per call and never checkpoints", async () => {
    const callsBefore = harness.calls.length;
    const run = await sendOne(harness, "test/three", { tag: "classic" });
    expect(run.status).toBe("Completed");
    expect(run.output).toEqual({ sum: 6 });
    const calls = harness.calls.slice(callsBefore);
    expect(calls).toHaveLength(4);
    expect(calls.every((call) => call.body.ctx?.fn_id === undefined)).toBe(true);
    expect(harness.engine.stats().checkpoints).toBe(0);
    expect(executed).toMatchObject({ "classic:first": 1, "classic:second": 1, "classic:third": 1 });
  });
});

describe("local Inngest engine: checkpoint failures and the signing key", () => {
  let harness: Harness;
  let failCheckpoints = true;
  let proxy: http.Server | undefined;
  const signingKey = `signkey-test-${"ab12".repeat(16)}`;

  beforeAll(async () => {
    harness = await Harness.start({
      functions,
      engine: { signingKey },
      client: {
        signingKey,
        // Between the app's client and the engine: fails checkpoint POSTs while failCheckpoints.
        apiUrl: async (engineUrl) => {
          const target = new URL(engineUrl);
          proxy = http.createServer((req, res) => {
            if (failCheckpoints && req.url?.startsWith("/v1/checkpoint/")) {
              req.resume();
              res.writeHead(500, { "content-type": "application/json" }).end('{"error":"unavailable"}');
              return;
            }
            const upstream = http.request(
              {
                host: target.hostname,
                port: target.port,
                method: req.method,
                path: req.url,
                headers: req.headers,
              },
              (answer) => {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                answer.pipe(res);
              },
            );
            req.pipe(upstream);
          });
          await new Promise<void>((resolve) => proxy?.listen(0, "127.0.0.1", resolve));
          return `http://127.0.0.1:${(proxy?.address() as AddressInfo).port}`;
        },
      },
    });
  });
  afterAll(async () => {
    await harness.stop();
    await new Promise<void>((resolve) => proxy?.close(() => resolve()));
  });

  test("when checkpoints fail the SDK falls back to classic and every step still runs once", async () => {
    failCheckpoints = true;
    const run = await sendOne(harness, "test/three", { tag: "fallback" });
    expect(run.status).toBe("Completed");
    expect(run.output).toEqual({ sum: 6 });
    expect(executed).toMatchObject({ "fallback:first": 1, "fallback:second": 1, "fallback:third": 1 });
    expect(harness.engine.stats().checkpoints).toBe(0);
  });

  test("with a signing key the checkpoint API checks the SDK's bearer", async () => {
    failCheckpoints = false;
    const before = harness.engine.stats().checkpoints;
    const run = await sendOne(harness, "test/three", { tag: "signed" });
    expect(run.status).toBe("Completed");
    expect(harness.engine.stats().checkpoints - before).toBe(3);

    const steps = [{ id: "x", op: "StepRun", data: 1 }];
    expect(await postCheckpoint(harness, run.run_id, { steps })).toBe(401);
    expect(await postCheckpoint(harness, run.run_id, { steps }, "checkpoint", "Bearer wrong")).toBe(401);
    // The right bearer gets past the check; the run has ended, so the state is gone (404 on Inngest).
    expect(
      await postCheckpoint(
        harness,
        run.run_id,
        { steps },
        "checkpoint",
        `Bearer ${hashedSigningKey(signingKey)}`,
      ),
    ).toBe(404);
  });
});
