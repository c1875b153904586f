import { createHmac, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import pino from "pino";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createLocalEngine, type LocalEngine } from "../../src/dev/inngest-engine";
import { createLogger } from "../../src/logger";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * An unsigned PUT /api/inngest must not re-register the app at a URL the caller picks.
 * The SDK's out-of-band sync (a PUT without `x-inngest-sync-kind: in_band`) needs no signature and
 * builds the URL it announces from the request's Host header. Tested both ways: production config
 * against a fake Inngest API that records /fn/register, and dev mode against the local engine.
 */

const signingKey = `signkey-prod-${randomBytes(32).toString("hex")}`;
const adminToken = "admin-token-0123456789";

function canonical(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`)
    .join(",")}}`;
}

function sign(body: unknown, key: string): string {
  const t = Math.floor(Date.now() / 1000).toString();
  const s = createHmac("sha256", key.replace(/^signkey-\w+-/, ""))
    .update(canonical(body) + t)
    .digest("hex");
  return `t=${t}&s=${s}`;
}

/** Inngest's API as far as a sync goes: records every POST /fn/register body. */
async function startFakeInngestApi(): Promise<{
  url: string;
  registered: { url: string }[];
  close(): Promise<void>;
}> {
  const registered: { url: string }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method === "POST" && req.url?.startsWith("/fn/register")) {
        registered.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as { url: string });
      }
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ ok: true, modified: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    registered,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const hijackHeaders = {
  Host: "evil.example",
  "X-Forwarded-Host": "evil.example",
  "X-Forwarded-Proto": "http",
};

describe("unsigned PUT /api/inngest cannot re-register the app at a caller-chosen URL", () => {
  describe("production config, against Inngest's API", () => {
    let database: TestDatabase;
    let services: Services;
    let inngestApi: Awaited<ReturnType<typeof startFakeInngestApi>>;
    let app: ReturnType<typeof buildApp>;

    beforeAll(async () => {
      database = await createTestDatabase();
      inngestApi = await startFakeInngestApi();
      const config = parseConfig({
        NODE_ENV: "production",
        LOG_LEVEL: "silent",
        PUBLIC_URL: "https://shop.example/store",
        DATABASE_URL: database.url,
        STRIPE_SECRET_KEY: "sk_test_hijack",
        STRIPE_WEBHOOK_SECRET: "whsec_hijack",
        INNGEST_SIGNING_KEY: signingKey,
        INNGEST_BASE_URL: inngestApi.url,
        SMTP_URL: "smtp://127.0.0.1:1",
        SLACK_WEBHOOK_URL: "http://127.0.0.1:1/slack",
        ADMIN_API_TOKEN: adminToken,
        CHECKOUT_API_TOKEN: "a-long-checkout-token-value",
        EASYPOST_API_KEY: "EZTK_hijack_test",
        EASYPOST_WEBHOOK_SECRET: "easypost-hijack-secret",
        WAREHOUSE_NAME: "Shop warehouse",
        WAREHOUSE_STREET1: "1 Dock Road",
        WAREHOUSE_CITY: "Springfield",
        WAREHOUSE_ZIP: "12345",
        WAREHOUSE_COUNTRY: "US",
        METRICS_TOKEN: "metrics-token-0123456789",
        LINK_SIGNING_SECRET: "hijack-test-link-signing-secret-0123456789",
        WEBHOOK_SECRETS_KEY: "hijack-test-webhook-secrets-key-0123456789",
        INNGEST_ENCRYPTION_KEY: "hijack-test-encryption-key-0123456789",
      });
      services = await createServices({
        config,
        logger: createLogger({ level: "silent" }),
        endpoints: {
          databaseUrl: database.url,
          stripeSecretKey: "sk_test_hijack",
          stripeWebhookSecret: "whsec_hijack",
          adminToken,
          easyPost: { apiKey: "EZTK_hijack_test" },
          easyPostWebhookSecret: "easypost-hijack-secret",
        },
      });
      app = buildApp(services);
    });
    afterAll(async () => {
      await services.close();
      await inngestApi.close();
      await database.drop();
    });

    it("refuses an unsigned out-of-band sync, whatever Host and X-Forwarded-* say, and registers nothing", async () => {
      await request(app).put("/api/inngest").set(hijackHeaders).expect(401);
      expect(inngestApi.registered).toEqual([]);
    });

    it("announces PUBLIC_URL in a signed in-band sync, whatever URL the body and headers name", async () => {
      const body = { url: "http://evil.example/api/inngest" };
      const res = await request(app)
        .put("/api/inngest")
        .set(hijackHeaders)
        .set("X-Inngest-Sync-Kind", "in_band")
        .set("X-Inngest-Signature", sign(body, signingKey))
        .send(body)
        .expect(200);
      expect(res.body.url).toBe("https://shop.example/store/api/inngest");
      const stepUrls = (
        res.body.functions as { steps: Record<string, { runtime: { url: string } }> }[]
      ).flatMap((fn) => Object.values(fn.steps).map((s) => s.runtime.url));
      expect(stepUrls.length).toBeGreaterThan(0);
      for (const url of stepUrls)
        expect(url.startsWith("https://shop.example/store/api/inngest?")).toBe(true);
      expect(inngestApi.registered).toEqual([]);
    });
  });

  describe("dev mode, against the local engine", () => {
    let database: TestDatabase;
    let services: Services;
    let engine: LocalEngine;
    let engineUrl: string;
    let server: Server;
    let appUrl: string;

    beforeAll(async () => {
      database = await createTestDatabase();
      engine = createLocalEngine({ databaseUrl: database.url, logger: pino({ level: "silent" }) });
      engineUrl = (await engine.listen(0, "127.0.0.1")).url;
      services = await createServices({
        config: parseConfig({ NODE_ENV: "test", LOG_LEVEL: "silent" }),
        logger: createLogger({ level: "silent" }),
        endpoints: {
          databaseUrl: database.url,
          stripeSecretKey: "sk_test_hijack",
          stripeWebhookSecret: "whsec_hijack",
          localEngineUrl: engineUrl,
          adminToken,
          easyPost: { apiKey: "EZTK_test_unused" },
        },
      });
      server = buildApp(services).listen(0, "127.0.0.1");
      await new Promise<void>((resolve) => server.once("listening", resolve));
      appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await engine.sync(`${appUrl}/api/inngest`);
    });
    afterAll(async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await engine.close();
      await services.close();
      await database.drop();
    });

    const registeredAppUrls = async (): Promise<string[]> => {
      const res = await fetch(`${engineUrl}/v1/functions`);
      const body = (await res.json()) as { data: { app_url: string; url: string }[] };
      return [...new Set(body.data.flatMap((fn) => [new URL(fn.app_url).host, new URL(fn.url).host]))];
    };

    it("keeps the engine calling the app, not the caller's host", async () => {
      expect(await registeredAppUrls()).toEqual([new URL(appUrl).host]);
      // Dev mode: an unsigned out-of-band sync is the dev server's way and is accepted, but it
      // announces the address the request arrived at, not Host or X-Forwarded-*.
      await request(server).put("/api/inngest").set(hijackHeaders).expect(200);
      expect(await registeredAppUrls()).toEqual([new URL(appUrl).host]);
      // The engine's own sync still works.
      await engine.sync(`${appUrl}/api/inngest`);
      expect(await registeredAppUrls()).toEqual([new URL(appUrl).host]);
    });
  });
});
