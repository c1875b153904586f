import http from "node:http";
import net from "node:net";
import express from "express";
import request from "supertest";
import { buildApp } from "../../src/app";
import {
  combineReadiness,
  createDatabaseReadiness,
  createInngestDevServerReadiness,
} from "../../src/health/readiness";
import { errorHandler } from "../../src/http/errors";
import { createLogger } from "../../src/logger";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog } from "../support/log-capture";

const logger = createLogger({ level: "silent" });

describe("HTTP basics", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it("answers /healthz and /readyz when the database is migrated", async () => {
    const app = buildApp({ logger, readiness: await createDatabaseReadiness(database.db) });

    await request(app).get("/healthz").expect(200, { status: "ok" });
    const ready = await request(app).get("/readyz").expect(200);
    expect(ready.body).toEqual({
      status: "ready",
      checks: { database: { ok: true }, migrations: { ok: true } },
    });
  });

  it("is not ready while a migration is pending", async () => {
    const empty = await createTestDatabase({ migrated: false });
    try {
      await empty.db.$executeRawUnsafe(
        `CREATE TABLE "_prisma_migrations" (migration_name text, finished_at timestamptz, rolled_back_at timestamptz)`,
      );
      const app = buildApp({ logger, readiness: await createDatabaseReadiness(empty.db) });
      const res = await request(app).get("/readyz").expect(503);
      expect(res.body.error.code).toBe("not_ready");
      expect(res.body.checks.migrations.detail).toMatch(/^pending: /);
    } finally {
      await empty.drop();
    }
  });

  it("is not ready when the database cannot be reached", async () => {
    const gone = await createTestDatabase();
    const readiness = await createDatabaseReadiness(gone.db);
    await gone.drop();
    const app = buildApp({ logger, readiness });

    const res = await request(app).get("/readyz").expect(503);
    expect(res.body).toMatchObject({ error: { code: "not_ready" }, checks: { database: { ok: false } } });
  });

  it("answers /favicon.ico 204 (cached a day) without an access-log line", async () => {
    const log = captureLog();
    const app = buildApp({ logger: log.logger, readiness: await createDatabaseReadiness(database.db) });
    const res = await request(app).get("/favicon.ico").expect(204);
    expect(res.headers["cache-control"]).toBe("public, max-age=86400");
    await request(app).get("/no/such/page").expect(404);
    const urls = log.lines().map((line) => (line.req as { url?: string } | undefined)?.url);
    expect(urls).toContain("/no/such/page");
    expect(urls).not.toContain("/favicon.ico");
  });

  it("is not ready, naming the Inngest dev server, when nothing answers at INNGEST_DEV's address", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const readiness = combineReadiness([
      await createDatabaseReadiness(database.db),
      createInngestDevServerReadiness(`http://127.0.0.1:${port}`),
    ]);
    const app = buildApp({ logger, readiness });
    const res = await request(app).get("/readyz").expect(503);
    expect(res.body.checks).toEqual({
      database: { ok: true },
      migrations: { ok: true },
      inngest: {
        ok: false,
        detail: `the Inngest dev server at http://127.0.0.1:${port} is unreachable (INNGEST_DEV); start it with: npx inngest-cli@latest dev`,
      },
    });

    const devServer = http.createServer((_req, res) => res.end("Inngest dev server"));
    await new Promise<void>((resolve) => devServer.listen(0, "127.0.0.1", resolve));
    try {
      const { port: up } = devServer.address() as net.AddressInfo;
      const ready = buildApp({
        logger,
        readiness: combineReadiness([
          await createDatabaseReadiness(database.db),
          createInngestDevServerReadiness(`http://127.0.0.1:${up}`),
        ]),
      });
      const answered = await request(ready).get("/readyz").expect(200);
      expect(answered.body.checks.inngest).toEqual({ ok: true });
    } finally {
      await new Promise<void>((resolve) => devServer.close(() => resolve()));
    }
  });

  it("answers unknown routes with the JSON error envelope and a request id", async () => {
    const app = buildApp({ logger, readiness: await createDatabaseReadiness(database.db) });
    const res = await request(app).get("/no/such/route").expect(404);
    expect(res.body).toEqual({
      error: { code: "route_not_found", message: "No route for GET /no/such/route" },
    });
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("keeps a sane caller-supplied request id and replaces an unsafe one", async () => {
    const app = buildApp({ logger, readiness: await createDatabaseReadiness(database.db) });
    const kept = await request(app).get("/healthz").set("X-Request-Id", "edge-1234");
    expect(kept.headers["x-request-id"]).toBe("edge-1234");
    const replaced = await request(app).get("/healthz").set("X-Request-Id", "bad id <script>");
    expect(replaced.headers["x-request-id"]).not.toBe("bad id <script>");
  });

  it("turns malformed JSON into a 400 without reaching any handler", async () => {
    const app = buildApp({ logger, readiness: await createDatabaseReadiness(database.db) });
    const res = await request(app)
      .post("/anything")
      .set("Content-Type", "application/json")
      .send("{not json");
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("invalid_json");
  });

  it("JSON sent without a JSON content type: 415 saying which content type to send", async () => {
    const echo = express.Router().post("/api/checkout", (req, res) => {
      res.json({ body: req.body ?? null });
    });
    const app = buildApp({ logger, readiness: await createDatabaseReadiness(database.db), checkout: echo });
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const res = await request(app)
        .post("/api/checkout")
        .set("Content-Type", type)
        .send('{"customerId":"c"}');
      expect(res.status).toBe(415);
      expect(res.body.error).toEqual({
        code: "unsupported_media_type",
        message: `The body was sent as ${type}; send JSON with the header Content-Type: application/json`,
      });
    }
    // With the header, and with no body at all, the route runs.
    await request(app)
      .post("/api/checkout")
      .send({ a: 1 })
      .expect(200, { body: { a: 1 } });
    await request(app).post("/api/checkout").expect(200, { body: null });
  });

  it("hides the message of unexpected errors from clients", async () => {
    const app = express();
    app.use(
      (req, _res, next) => {
        (req as unknown as { log: typeof logger }).log = logger;
        next();
      },
      () => {
        throw new Error("connection string postgres://secret@db leaked");
      },
    );
    app.use(errorHandler);
    const res = await request(app).get("/").expect(500);
    expect(res.body.error.code).toBe("internal_error");
    expect(JSON.stringify(res.body)).not.toMatch(/secret/);
  });
});
