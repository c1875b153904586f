import { createHmac, randomBytes } from "node:crypto";
import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createLogger } from "../../src/logger";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * serve() in cloud mode (a signing key, no dev server, no local engine), called the way Inngest
 * calls it: X-Inngest-Signature = `t=<unix seconds>&s=<hex HMAC-SHA256(canonical JSON body + t)>`,
 * keyed with the signing key minus its `signkey-<env>-` prefix.
 */

const signingKey = `signkey-test-${randomBytes(32).toString("hex")}`;
const fallbackKey = `signkey-test-${randomBytes(32).toString("hex")}`;
const wrongKey = `signkey-test-${randomBytes(32).toString("hex")}`;

/** RFC 8785 canonical JSON for the plain values used here: keys sorted, no whitespace. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`)
    .join(",")}}`;
}

function sign(body: unknown, key: string, at = Date.now()): string {
  const t = Math.floor(at / 1000).toString();
  const s = createHmac("sha256", key.replace(/^signkey-\w+-/, ""))
    .update(canonical(body) + t)
    .digest("hex");
  return `t=${t}&s=${s}`;
}

describe("serve() in cloud mode", () => {
  let database: TestDatabase;
  let services: Services;
  let app: ReturnType<typeof buildApp>;

  beforeAll(async () => {
    database = await createTestDatabase();
    const config = parseConfig({
      NODE_ENV: "test",
      LOG_LEVEL: "silent",
      INNGEST_SIGNING_KEY: signingKey,
      INNGEST_SIGNING_KEY_FALLBACK: fallbackKey,
      INNGEST_EVENT_KEY: "test-event-key",
    });
    services = await createServices({
      config,
      logger: createLogger({ level: "silent" }),
      endpoints: {
        databaseUrl: database.url,
        stripeSecretKey: "sk_test_signature",
        stripeWebhookSecret: "whsec_test_signature",
        adminToken: "admin-token-0123456789",
        easyPost: { apiKey: "EZTK_test_unused" },
      },
    });
    app = buildApp(services);
  });
  afterAll(async () => {
    await services.close();
    await database.drop();
  });

  describe("a sync (PUT, in band)", () => {
    const body = { url: "http://shop.test/api/inngest" };
    const sync = () => request(app).put("/api/inngest").set("X-Inngest-Sync-Kind", "in_band");

    it("is refused without a signature", async () => {
      const res = await sync().send(body).expect(401);
      expect(res.body).toEqual({ message: "Unauthorized" });
    });

    it("is refused when signed with another key", async () => {
      await sync().set("X-Inngest-Signature", sign(body, wrongKey)).send(body).expect(401);
    });

    it("is refused when the signature is older than five minutes", async () => {
      const stale = sign(body, signingKey, Date.now() - 10 * 60_000);
      await sync().set("X-Inngest-Signature", stale).send(body).expect(401);
    });

    it("is refused when the body is not the one signed", async () => {
      const signature = sign(body, signingKey);
      await sync()
        .set("X-Inngest-Signature", signature)
        .send({ url: "http://attacker.test/api/inngest" })
        .expect(401);
    });

    it("is answered with the app's functions when correctly signed, and the answer is signed back", async () => {
      const res = await sync().set("X-Inngest-Signature", sign(body, signingKey)).send(body).expect(200);
      expect(res.body.app_id).toBe("shop");
      expect(res.body.functions.map((fn: { id: string }) => fn.id)).toEqual(
        expect.arrayContaining(["shop-fulfill-order", "shop-cleanup-cancelled-order"]),
      );
      const [, t, s] = /^t=(\d+)&s=([0-9a-f]{64})$/.exec(res.headers["x-inngest-signature"] ?? "") ?? [];
      expect(t).toBeDefined();
      const expected = createHmac("sha256", signingKey.replace(/^signkey-\w+-/, ""))
        .update(res.text + t)
        .digest("hex");
      expect(s).toBe(expected);
    });

    it("accepts the fallback key during a key rotation", async () => {
      await sync().set("X-Inngest-Signature", sign(body, fallbackKey)).send(body).expect(200);
    });
  });

  describe("a function call (POST)", () => {
    const orderId = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
    const event = {
      name: "shop/order.placed",
      id: `order-placed-${orderId}`,
      ts: 1_700_000_000_000,
      data: {
        orderId,
        customerId: "cus_signature",
        email: "signature@example.com",
        total: 2500,
        currency: "usd",
        paymentIntentId: "pi_signature",
        fulfilmentKey: orderId,
      },
    };
    const body = {
      event,
      events: [event],
      steps: {},
      ctx: {
        run_id: "01SIGNATURETESTRUN0000000",
        attempt: 0,
        max_attempts: 6,
        disable_immediate_execution: false,
        use_api: false,
        stack: { stack: [], current: 0 },
      },
      version: 2,
    };
    /** Step attempts the service has run, as its metrics count them. */
    const stepsRun = async () => {
      const metric = await services.metrics.registry.getSingleMetric("workflow_steps_total")?.get();
      return metric?.values.reduce((sum, value) => sum + value.value, 0);
    };
    const call = () =>
      request(app).post("/api/inngest").query({ fnId: "shop-fulfill-order", stepId: "step" });

    it("is refused without a signature, and nothing runs", async () => {
      await call().send(body).expect(401);
      expect(await stepsRun()).toBe(0);
    });

    it("is refused when signed with another key", async () => {
      await call().set("X-Inngest-Signature", sign(body, wrongKey)).send(body).expect(401);
      expect(await stepsRun()).toBe(0);
    });

    it("runs the function's first step when correctly signed", async () => {
      const res = await call().set("X-Inngest-Signature", sign(body, signingKey)).send(body).expect(206);
      expect(res.body).toEqual([expect.objectContaining({ op: "StepRun", displayName: "claim" })]);
      expect(await stepsRun()).toBe(1);
    });
  });
});
