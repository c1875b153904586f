import express from "express";
import request from "supertest";
import { errorHandler } from "../../src/http/errors";
import { rateLimit } from "../../src/http/rate-limit";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

const someOrder = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

describe("admin API and webhooks, as wired", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { ADMIN_RATE_LIMIT: "3" } });
  });
  afterAll(() => h.close());

  it("refuses bodies over each route's limit with 413", async () => {
    const big = JSON.stringify({ reason: "x".repeat(200 * 1024) });
    const cancel = await request(h.appUrl)
      .post(`/api/orders/${someOrder}/cancel`)
      .set("Authorization", `Bearer ${adminToken}`)
      .set("Content-Type", "application/json")
      .send(big)
      .expect(413);
    expect(cancel.body.error.code).toBe("payload_too_large");

    const notice = JSON.stringify({ trackingNumber: "T".repeat(70 * 1024), status: "delivered" });
    const carrier = await request(h.appUrl)
      .post("/api/carrier/webhook")
      .set("Content-Type", "application/json")
      .set("X-Carrier-Signature", "0".repeat(64))
      .send(notice)
      .expect(413);
    expect(carrier.body.error.code).toBe("payload_too_large");
  });

  it("answers the admin request past ADMIN_RATE_LIMIT per minute with 429 and Retry-After", async () => {
    // The body-limit test above spent one of this client's three requests.
    for (let i = 0; i < 2; i++) {
      await request(h.appUrl)
        .get(`/api/orders/${someOrder}`)
        .set("Authorization", `Bearer ${adminToken}`)
        .expect(404);
    }
    const limited = await request(h.appUrl)
      .get(`/api/orders/${someOrder}`)
      .set("Authorization", `Bearer ${adminToken}`)
      .expect(429);
    expect(limited.body.error).toEqual({
      code: "rate_limited",
      message: expect.stringMatching(/retry in \d+s/),
    });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers["retry-after"])).toBeLessThanOrEqual(60);

    // Limited before the token is checked, so guessing tokens is limited too.
    await request(h.appUrl).get(`/api/orders/${someOrder}`).set("Authorization", "Bearer guess").expect(429);
    // Other routes are not limited.
    await request(h.appUrl).get("/healthz").expect(200);
  });
});

describe("rateLimit", () => {
  let now = 0;
  const app = express();
  app.set("trust proxy", true); // lets the test pose as different clients through X-Forwarded-For
  app.use(rateLimit({ capacity: 2, refillMs: 60_000, now: () => now }));
  app.get("/", (_req, res) => {
    res.json({ ok: true });
  });
  app.use(errorHandler);
  const from = (ip: string) => request(app).get("/").set("X-Forwarded-For", ip);

  it("gives each client its own bucket and refills it over time", async () => {
    now = 0;
    await from("10.0.0.1").expect(200);
    await from("10.0.0.1").expect(200);
    const limited = await from("10.0.0.1").expect(429);
    expect(limited.headers["retry-after"]).toBe("30"); // one token every 30 s
    await from("10.0.0.2").expect(200);

    now = 29_000;
    await from("10.0.0.1").expect(429);
    now = 30_000;
    await from("10.0.0.1").expect(200);
    await from("10.0.0.1").expect(429);
  });

  it("forgets idle clients instead of growing without bound", async () => {
    const bounded = express();
    bounded.set("trust proxy", true);
    let t = 0;
    bounded.use(rateLimit({ capacity: 1, refillMs: 1_000, now: () => t, maxClients: 2 }));
    bounded.get("/", (_req, res) => {
      res.json({ ok: true });
    });
    bounded.use(errorHandler);
    const as = (ip: string) => request(bounded).get("/").set("X-Forwarded-For", ip);

    await as("10.0.1.1").expect(200);
    await as("10.0.1.2").expect(200);
    await as("10.0.1.3").expect(200); // the oldest client was dropped to make room
    await as("10.0.1.1").expect(200); // ...so it starts afresh
    t = 500;
    await as("10.0.1.1").expect(429);
  });
});
