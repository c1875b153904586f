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
});
