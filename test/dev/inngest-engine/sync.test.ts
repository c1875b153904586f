import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { Inngest, type InngestFunction } from "inngest";
import { serve } from "inngest/express";
import { createLocalEngine } from "../../../src/dev/inngest-engine";
import { Harness, silentLogger } from "./fixtures/harness";

type AnyFunction = InngestFunction.Like;

interface SyncRequest {
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

async function serveApp(
  client: Inngest,
  functions: AnyFunction[],
  options: { enableUnauthedSync?: boolean } = {},
): Promise<{ url: string; syncs: SyncRequest[]; close(): Promise<void> }> {
  const syncs: SyncRequest[] = [];
  const app = express();
  app.use(express.json({ limit: "10mb" }));
  app.use("/api/inngest", (req, _res, next) => {
    if (req.method === "PUT") syncs.push({ headers: req.headers, body: req.body as unknown });
    next();
  });
  // enableUnauthedSync: false is what the service sets: in cloud mode every request is signature-checked.
  app.use(
    "/api/inngest",
    serve({ client, functions, enableUnauthedSync: options.enableUnauthedSync ?? false }),
  );
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/inngest`,
    syncs,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe("local Inngest engine: syncing and the HTTP API", () => {
  let harness: Harness;
  const signingKey = "signkey-test-0123456789abcdef0123456789abcdef";

  beforeAll(async () => {
    harness = await Harness.start({
      functions: (inngest) => [
        inngest.createFunction(
          { id: "echo", triggers: [{ event: "test/echo" }] },
          async ({ event, step }) => {
            const upper = await step.run("shout", () =>
              String((event.data as { text: string }).text).toUpperCase(),
            );
            return upper;
          },
        ),
      ],
    });
  });

  afterAll(async () => {
    await harness.stop();
  });

  test("sync refuses an invalid expression (undeclared variable) and names it", async () => {
    const client = new Inngest({
      id: "bad-app",
      isDev: true,
      baseUrl: harness.engineUrl,
      logger: silentLogger,
    });
    const app = await serveApp(client, [
      client.createFunction(
        { id: "fancy", triggers: [{ event: "test/fancy", if: "size(user.items) > 0" }] },
        async () => "x",
      ),
    ]);
    try {
      await expect(harness.engine.sync(app.url)).rejects.toThrow(
        'Function "bad-app-fancy" trigger "test/fancy": Unsupported expression "size(user.items) > 0"',
      );
      const { body } = await harness.api<{ data: { id: string }[] }>("/v1/functions");
      expect(body.data.map((fn) => fn.id)).not.toContain("bad-app-fancy");
    } finally {
      await app.close();
    }
  });

  test("out-of-band sync: the SDK registers through POST /fn/register", async () => {
    const client = new Inngest({
      id: "oob-app",
      isDev: true,
      baseUrl: harness.engineUrl,
      logger: silentLogger,
    });
    const app = await serveApp(client, [
      client.createFunction({ id: "hello", triggers: [{ event: "test/oob" }] }, async () => "hello from oob"),
    ]);
    try {
      const response = await fetch(app.url, { method: "PUT" });
      expect(response.status).toBe(200);
      const [eventId] = await harness.send({ name: "test/oob" });
      expect(await harness.onlyRunOf(eventId as string)).toMatchObject({
        function_id: "oob-app-hello",
        status: "Completed",
        output: "hello from oob",
      });
    } finally {
      await app.close();
    }
  });

  describe.each([
    {
      kind: "out-of-band" as const,
      // The Inngest dev server's request (inngest/inngest pkg/deploy/deploy.go Ping): no sync kind.
      expectedHeaders: { "x-inngest-server-kind": "dev", "content-type": "application/json" },
    },
    {
      kind: "in-band" as const,
      expectedHeaders: { "x-inngest-server-kind": "dev", "x-inngest-sync-kind": "in_band" },
    },
  ])("$kind sync driven by the engine", ({ kind, expectedHeaders }) => {
    test(`sends the ${kind} PUT and registers the app's functions`, async () => {
      const client = new Inngest({
        id: `${kind}-app`,
        isDev: true,
        baseUrl: harness.engineUrl,
        logger: silentLogger,
      });
      const app = await serveApp(client, [
        client.createFunction({ id: "hi", triggers: [{ event: `test/${kind}` }] }, async () => `hi ${kind}`),
      ]);
      try {
        await harness.engine.sync(app.url, kind);
        expect(app.syncs).toHaveLength(1);
        const [request] = app.syncs as [SyncRequest];
        expect(request.headers).toMatchObject(expectedHeaders);
        if (kind === "out-of-band") expect(request.headers["x-inngest-sync-kind"]).toBeUndefined();
        expect(request.headers["x-inngest-signature"]).toBeUndefined();
        expect(request.body).toEqual({ url: app.url });
        const [eventId] = await harness.send({ name: `test/${kind}` });
        expect(await harness.onlyRunOf(eventId as string)).toMatchObject({
          function_id: `${kind}-app-hi`,
          status: "Completed",
          output: `hi ${kind}`,
        });
      } finally {
        await app.close();
      }
    });
  });

  test("an out-of-band sync that registered with another server is an error, not a silent success", async () => {
    const other = createLocalEngine({
      databaseUrl: harness.db.url,
      schema: "inngest_other",
      logger: silentLogger,
    });
    const { url: otherUrl } = await other.listen(0);
    const client = new Inngest({ id: "elsewhere-app", isDev: true, baseUrl: otherUrl, logger: silentLogger });
    const app = await serveApp(client, [
      client.createFunction({ id: "x", triggers: [{ event: "test/elsewhere" }] }, async () => "x"),
    ]);
    try {
      await expect(harness.engine.sync(app.url)).rejects.toThrow(/did not register here/);
    } finally {
      await other.close();
      await app.close();
    }
  });

  test("with a signing key, requests are signed so an app in cloud mode accepts them", async () => {
    const engine = createLocalEngine({
      databaseUrl: harness.db.url,
      schema: "inngest_signed",
      logger: silentLogger,
      signingKey,
    });
    const { url: engineUrl } = await engine.listen(0);
    const client = new Inngest({
      id: "cloud-app",
      isDev: false,
      signingKey,
      eventKey: "local",
      baseUrl: engineUrl,
      logger: silentLogger,
    });
    const app = await serveApp(client, [
      client.createFunction({ id: "signed", triggers: [{ event: "test/signed" }] }, async ({ step }) =>
        step.run("s", () => "verified"),
      ),
    ]);
    try {
      // The default, out-of-band: signed as self-hosted Inngest signs it, and the SDK's
      // POST /fn/register carries the hashed signing key the engine checks.
      await engine.sync(app.url);
      expect(app.syncs.at(-1)?.headers).toMatchObject({
        "x-inngest-server-kind": "cloud",
        "x-inngest-signature": expect.stringMatching(/^t=\d+&s=[0-9a-f]{64}$/),
      });
      const unauthorized = await fetch(`${engineUrl}/fn/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: "http://evil.example/api/inngest", appName: "x", functions: [] }),
      });
      expect(unauthorized.status).toBe(401);
      await engine.sync(app.url, "in-band");
      const reply = await fetch(`${engineUrl}/e/local`, {
        method: "POST",
        body: JSON.stringify({ name: "test/signed" }),
      });
      const { ids } = (await reply.json()) as { ids: string[] };
      await engine.drain();
      const runs = (await (await fetch(`${engineUrl}/v1/events/${ids[0]}/runs`)).json()) as {
        data: { status: string; output: unknown }[];
      };
      expect(runs.data).toEqual([expect.objectContaining({ status: "Completed", output: "verified" })]);

      // The same app refuses an engine that does not sign, both ways.
      await expect(harness.engine.sync(app.url)).rejects.toThrow(/HTTP 401/);
      await expect(harness.engine.sync(app.url, "in-band")).rejects.toThrow(/HTTP 401/);
    } finally {
      await engine.close();
      await app.close();
    }
  });

  test("REST API shapes", async () => {
    const [eventId] = await harness.send({ name: "test/echo", data: { text: "hi" } });
    await harness.engine.drain();

    const byEvent = await harness.api<{ data: unknown[] }>(`/v1/events/${eventId}/runs`);
    expect(byEvent.status).toBe(200);
    expect(byEvent.body.data).toEqual([
      expect.objectContaining({
        run_id: expect.any(String),
        function_id: "engine-test-echo",
        status: "Completed",
        output: "HI",
        event_id: eventId,
      }),
    ]);
    const runId = (byEvent.body.data[0] as { run_id: string }).run_id;

    const run = await harness.api<{ data: Record<string, unknown> }>(`/v1/runs/${runId}`);
    expect(run.body.data).toEqual({
      run_id: runId,
      function_id: "engine-test-echo",
      status: "Completed",
      output: "HI",
      error: null,
      event_id: eventId,
      event: expect.objectContaining({
        id: eventId,
        name: "test/echo",
        data: { text: "hi" },
        ts: expect.any(Number),
      }),
      started_at: expect.any(String),
      ended_at: expect.any(String),
      steps: [
        {
          id: expect.stringMatching(/^[0-9a-f]{40}$/),
          name: "shout",
          op: "StepRun",
          status: "Completed",
          output: "HI",
          error: null,
          completed_at: expect.any(String),
          started_at: expect.any(String),
          duration_ms: expect.any(Number),
        },
      ],
      pending: [],
    });

    const event = await harness.api<{ data: Record<string, unknown> }>(`/v1/events/${eventId}`);
    expect(event.body.data).toMatchObject({ internal_id: eventId, name: "test/echo", deduplicated: false });

    const missing = await harness.api<{ error: { code: string } }>("/v1/runs/nope");
    expect(missing).toEqual({ status: 404, body: { error: { code: "not_found", message: "No run nope" } } });

    const unknown = await harness.api<{ error: { code: string } }>("/nope");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("route_not_found");

    const bad = await harness.api<{ error: { code: string } }>("/e/key", {
      method: "POST",
      body: JSON.stringify({ data: {} }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("validation_failed");
  });

  test("the handler mounts inside another express app and lets unknown paths fall through", async () => {
    const host = express();
    host.use("/engine", harness.engine.handler);
    host.get("/mine", (_req, res) => {
      res.json({ mine: true });
    });
    const server = http.createServer(host);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await (await fetch(`${base}/engine/v1/health`)).json()).toEqual({ status: "ok" });
      expect(await (await fetch(`${base}/engine/mine`)).status).toBe(404);
      expect(await (await fetch(`${base}/mine`)).json()).toEqual({ mine: true });
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    }
  });
});
