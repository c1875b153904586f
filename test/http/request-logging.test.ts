import express from "express";
import request from "supertest";
import { createLogger } from "../../src/logger";
import { requestLogging } from "../../src/http/request-logging";

// serve() is called several times per order; a successful call is not worth an info line each (and
// its cost to throughput), a failed one still is.
function appLoggingTo(lines: Record<string, unknown>[]) {
  const logger = createLogger({
    level: "info",
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const app = express();
  app.use(requestLogging(logger));
  app.put("/api/inngest", (_req, res) => void res.status(200).json({}));
  app.post("/api/inngest", (_req, res) => void res.status(500).json({}));
  app.get("/api/orders/x", (_req, res) => void res.status(200).json({}));
  return app;
}

const completions = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => l.msg === "request completed" || l.msg === "request errored");

describe("request logging (quieter serve() lines, for throughput)", () => {
  it("logs a successful /api/inngest call at debug, so not at info", async () => {
    const lines: Record<string, unknown>[] = [];
    await request(appLoggingTo(lines)).put("/api/inngest?fnId=x&stepId=y").expect(200);
    expect(completions(lines)).toEqual([]);
  });

  it("still logs a failed /api/inngest call and every other route at info or above", async () => {
    const lines: Record<string, unknown>[] = [];
    const app = appLoggingTo(lines);
    await request(app).post("/api/inngest").expect(500);
    await request(app).get("/api/orders/x").expect(200);
    expect(completions(lines).map((l) => [l.level, (l.req as { url: string }).url])).toEqual([
      [50, "/api/inngest"],
      [30, "/api/orders/x"],
    ]);
  });

  it("a failed /api/inngest call carries its request id, echoed to the caller, and a 4xx is a warning", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      level: "info",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const app = express();
    app.use(requestLogging(logger));
    app.post("/api/inngest", (req, res) => {
      // The route's own logger is there for the error handler, as on every route.
      (req as unknown as { log: typeof logger }).log.info(
        { id: (req as unknown as { id: string }).id },
        "inside",
      );
      res.status(401).json({});
    });
    const answer = await request(app)
      .post("/api/inngest?sig=secret")
      .set("X-Request-Id", "req-42")
      .expect(401);
    expect(answer.headers["x-request-id"]).toBe("req-42");
    expect(lines.find((l) => l.msg === "inside")).toMatchObject({ id: "req-42" });
    expect(completions(lines)).toEqual([
      expect.objectContaining({
        level: 40,
        req: { id: "req-42", method: "POST", url: "/api/inngest?sig=[redacted]" },
        res: { statusCode: 401 },
      }),
    ]);
  });

  it("with debug on, a successful /api/inngest call is logged at debug as before", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      level: "debug",
      destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const app = express();
    app.use(requestLogging(logger));
    app.put("/api/inngest", (_req, res) => void res.status(200).json({}));
    await request(app).put("/api/inngest").expect(200);
    expect(completions(lines).map((l) => l.level)).toEqual([20]);
  });
});
