import request from "supertest";
import { adminToken, WorkflowHarness } from "../support/workflow-harness";

jest.setTimeout(60_000);

const someOrder = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

describe("admin API and webhooks, as wired", () => {
  let h: WorkflowHarness;

  beforeAll(async () => {
    h = await WorkflowHarness.start({ env: { ADMIN_RATE_LIMIT: "3", TRUST_PROXY: "loopback" } });
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
      .set("X-Hmac-Signature", `hmac-sha256-hex=${"0".repeat(64)}`)
      .send(notice)
      .expect(413);
    expect(carrier.body.error.code).toBe("payload_too_large");
  });

  it("answers bad tokens past ADMIN_RATE_LIMIT per minute with 429 and Retry-After, never a valid token", async () => {
    // A client guessing tokens (supertest comes from loopback, which TRUST_PROXY trusts).
    const guess = (client: string) =>
      request(h.appUrl)
        .get(`/api/orders/${someOrder}`)
        .set("X-Forwarded-For", client)
        .set("Authorization", "Bearer guess");
    for (let i = 0; i < 3; i++) await guess("198.51.100.7").expect(401);
    const limited = await guess("198.51.100.7").expect(429);
    expect(limited.body.error).toEqual({
      code: "rate_limited",
      message: expect.stringMatching(/retry in \d+s/),
    });
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers["retry-after"])).toBeLessThanOrEqual(60);

    // The valid token is never throttled, even from the guessing client's address ...
    for (let i = 0; i < 5; i++) {
      await request(h.appUrl)
        .get(`/api/orders/${someOrder}`)
        .set("X-Forwarded-For", "198.51.100.7")
        .set("Authorization", `Bearer ${adminToken}`)
        .expect(404);
    }
    // ... and another client behind the same proxy has a bucket of its own.
    await guess("198.51.100.8").expect(401);
    // Other routes are not limited.
    await request(h.appUrl).get("/healthz").set("X-Forwarded-For", "198.51.100.7").expect(200);
  });
});
