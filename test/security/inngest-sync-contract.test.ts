import { createHash, createHmac, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createLogger } from "../../src/logger";
import { createServices, type Services } from "../../src/wiring";
import { captureLog } from "../support/log-capture";
import { createTestDatabase, type TestDatabase } from "../support/database";

/**
 * The sync requests real Inngest servers send, replayed byte for byte from Inngest's own code
 * (inngest/inngest `pkg/deploy/deploy.go` `Ping`, and `inngestgo.Sign` for the signature), and
 * what reaches the server's `/fn/register` in answer. Forged `Host`, `X-Forwarded-Host`,
 * `X-Forwarded-Proto` and `deployId` on every request: the URL announced is always the pinned one.
 */

const signingKey = `signkey-prod-${randomBytes(32).toString("hex")}`;
const otherKey = `signkey-prod-${randomBytes(32).toString("hex")}`;
const forged = {
  Host: "evil.example",
  "X-Forwarded-Host": "evil.example",
  "X-Forwarded-Proto": "https",
  Forwarded: "host=evil.example;proto=https",
};

/** `json.Marshal(map[string]string{"url": url})`: Go escapes <, > and & in strings. */
function goPingBody(url: string): string {
  return JSON.stringify({ url }).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
}

/** RFC 8785 for the one-string-field body Ping sends (what `jcs.Transform` makes of it). */
function jcs(body: string): string {
  const parsed = JSON.parse(body) as Record<string, string>;
  return `{${Object.keys(parsed)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(parsed[key])}`)
    .join(",")}}`;
}

/** inngestgo.Sign: HMAC-SHA256(key less `signkey-<env>-`, jcs(body) + unix seconds), `t=..&s=..`. */
function inngestgoSign(body: string, key: string, at = Date.now()): string {
  const ts = Math.floor(at / 1000).toString();
  const mac = createHmac("sha256", key.replace(/^signkey-\w+-/, ""))
    .update(jcs(body))
    .update(ts)
    .digest("hex");
  return `t=${ts}&s=${mac}`;
}

interface Registration {
  query: URLSearchParams;
  authorization: string | undefined;
  body: {
    url: string;
    deployId?: string;
    appName: string;
    functions: { steps: Record<string, { runtime: { url: string } }> }[];
  };
}

/** Inngest's API as far as a sync goes: records each POST /fn/register and answers as Inngest does. */
async function startInngestApi(): Promise<{
  url: string;
  registered: Registration[];
  close(): Promise<void>;
}> {
  const registered: Registration[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://inngest");
      if (req.method === "POST" && url.pathname === "/fn/register") {
        registered.push({
          query: url.searchParams,
          authorization: req.headers.authorization,
          body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Registration["body"],
        });
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

const productionEnv = (inngestApi: string, extra: Record<string, string> = {}) => ({
  NODE_ENV: "production",
  LOG_LEVEL: "silent",
  PUBLIC_URL: "https://shop.example/store",
  STRIPE_SECRET_KEY: "sk_test_sync",
  STRIPE_WEBHOOK_SECRET: "whsec_sync",
  INNGEST_SIGNING_KEY: signingKey,
  // Self-hosted Inngest (`inngest start`): its base URL, no Cloud event key needed.
  INNGEST_BASE_URL: inngestApi,
  SMTP_URL: "smtp://127.0.0.1:1",
  SLACK_WEBHOOK_URL: "http://127.0.0.1:1/slack",
  ADMIN_API_TOKEN: "admin-token-0123456789",
  EASYPOST_API_KEY: "EZTK_sync_test",
  EASYPOST_WEBHOOK_SECRET: "easypost-sync-secret",
  WAREHOUSE_NAME: "Shop warehouse",
  WAREHOUSE_STREET1: "1 Dock Road",
  WAREHOUSE_CITY: "Springfield",
  WAREHOUSE_ZIP: "12345",
  WAREHOUSE_COUNTRY: "US",
  METRICS_TOKEN: "metrics-token-0123456789",
  CHECKOUT_API_TOKEN: "checkout-token-0123456789",
  LINK_SIGNING_SECRET: "sync-test-link-signing-secret-0123456789",
  WEBHOOK_SECRETS_KEY: "sync-test-webhook-secrets-key-0123456789",
  INNGEST_ENCRYPTION_KEY: "sync-test-encryption-key-0123456789",
  ...extra,
});

interface RunningApp {
  services: Services;
  server: Server;
  url: string;
  close(): Promise<void>;
}

async function startApp(
  database: TestDatabase,
  env: Record<string, string>,
  logger = createLogger({ level: "silent" }),
): Promise<RunningApp> {
  const config = parseConfig({ ...env, DATABASE_URL: database.url });
  const services = await createServices({
    config,
    logger,
    endpoints: {
      databaseUrl: database.url,
      stripeSecretKey: "sk_test_sync",
      stripeWebhookSecret: "whsec_sync",
      adminToken: "admin-token-0123456789",
      // Never called: these tests only sync the app.
      easyPost: { apiKey: "EZTK_sync_test" },
      easyPostWebhookSecret: "easypost-sync-secret",
    },
  });
  const server = buildApp(services).listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  return {
    services,
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await services.close();
    },
  };
}

/** `PUT <app url>` as Ping builds it; `signWith` as a server with a signing key does. */
function ping(app: RunningApp, options: { serverKind: "dev" | "cloud"; signWith?: string; query?: string }) {
  const body = goPingBody(`${app.url}/api/inngest`);
  let req = request(app.server)
    .put(`/api/inngest${options.query ?? ""}`)
    .set(forged)
    .set("Content-Type", "application/json")
    .set("User-Agent", "Go-http-client/1.1")
    .set("X-Inngest-Server-Kind", options.serverKind);
  if (options.signWith) req = req.set("X-Inngest-Signature", inngestgoSign(body, options.signWith));
  return req.send(body);
}

const stepUrls = (registration: Registration): string[] =>
  registration.body.functions.flatMap((fn) => Object.values(fn.steps).map((step) => step.runtime.url));

describe("syncing the app the way Inngest's servers do", () => {
  let database: TestDatabase;
  let inngestApi: Awaited<ReturnType<typeof startInngestApi>>;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  beforeEach(async () => {
    inngestApi = await startInngestApi();
  });
  afterEach(async () => {
    await inngestApi.close();
  });
  afterAll(async () => {
    await database.drop();
  });

  describe("the Inngest dev server (dev mode, no signing key)", () => {
    let app: RunningApp;
    beforeEach(async () => {
      app = await startApp(database, {
        NODE_ENV: "development",
        LOG_LEVEL: "silent",
        INNGEST_DEV: inngestApi.url,
        // Behind a trusted proxy X-Forwarded-Proto would set the protocol: it must not reach the URL.
        TRUST_PROXY: "loopback",
      });
    });
    afterEach(async () => {
      await app.close();
    });

    it("its unsigned PUT syncs: /fn/register receives the address the app is reached at, whatever the headers say", async () => {
      const res = await ping(app, { serverKind: "dev", query: "?deployId=forged-deploy" });
      expect(res.status).toBe(200);
      expect(res.headers["x-inngest-sync-kind"]).toBe("out_of_band");
      expect(inngestApi.registered).toHaveLength(1);
      const [registration] = inngestApi.registered as [Registration];
      expect(registration.body.url).toBe(`${app.url}/api/inngest`);
      expect(registration.body.appName).toBe("shop");
      // deployId from an unsigned request is ignored.
      expect(registration.body.deployId).toBeUndefined();
      expect(registration.query.has("deployId")).toBe(false);
      expect(stepUrls(registration).length).toBeGreaterThan(0);
      for (const url of stepUrls(registration)) expect(url.startsWith(`${app.url}/api/inngest?`)).toBe(true);
    });
  });

  describe("self-hosted Inngest (`inngest start` with a signing key)", () => {
    let app: RunningApp;
    beforeEach(async () => {
      app = await startApp(database, productionEnv(inngestApi.url));
    });
    afterEach(async () => {
      await app.close();
    });

    it("its signed PUT syncs: /fn/register receives PUBLIC_URL's serve URL and the signed deployId", async () => {
      const res = await ping(app, { serverKind: "cloud", signWith: signingKey, query: "?deployId=deploy-7" });
      expect(res.status).toBe(200);
      expect(inngestApi.registered).toHaveLength(1);
      const [registration] = inngestApi.registered as [Registration];
      expect(registration.body.url).toBe("https://shop.example/store/api/inngest");
      expect(registration.query.get("deployId")).toBe("deploy-7");
      // Authenticated to Inngest with the hashed signing key, as the SDK does.
      const hashed = createHash("sha256")
        .update(Buffer.from(signingKey.replace(/^signkey-\w+-/, ""), "hex"))
        .digest("hex");
      expect(registration.authorization).toBe(`Bearer signkey-prod-${hashed}`);
      for (const url of stepUrls(registration))
        expect(url.startsWith("https://shop.example/store/api/inngest?")).toBe(true);
    });

    it("an unsigned out-of-band PUT gets 401 and registers nothing", async () => {
      const res = await ping(app, { serverKind: "cloud" });
      expect(res.status).toBe(401);
      expect(inngestApi.registered).toEqual([]);
    });

    it("a PUT signed with another key, or with the body changed, gets 401 and registers nothing", async () => {
      expect((await ping(app, { serverKind: "cloud", signWith: otherKey })).status).toBe(401);
      const body = goPingBody("https://evil.example/api/inngest");
      const res = await request(app.server)
        .put("/api/inngest")
        .set(forged)
        .set("Content-Type", "application/json")
        .set("X-Inngest-Signature", inngestgoSign(goPingBody(`${app.url}/api/inngest`), signingKey))
        .send(body);
      expect(res.status).toBe(401);
      expect(inngestApi.registered).toEqual([]);
    });

    it("an unsigned POST is refused and logged at warn once, then at debug", async () => {
      const log = captureLog("debug");
      const logged = await startApp(
        database,
        { ...productionEnv(inngestApi.url), LOG_LEVEL: "debug" },
        log.logger,
      );
      try {
        for (let i = 0; i < 3; i++) {
          const res = await request(logged.server)
            .post("/api/inngest?fnId=shop-fulfill-order&stepId=step")
            .send({ event: { name: "x" } });
          expect(res.status).toBe(401);
        }
        const lines = log.lines().filter((line) => line.component === "inngest-endpoint");
        expect(lines.map((line) => line.level)).toEqual([40, 20, 20]);
        expect(lines[0]).toMatchObject({ method: "POST", path: "/api/inngest" });
        expect(log.lines().filter((line) => (line.level as number) >= 50)).toEqual([]);
      } finally {
        await logged.close();
      }
    });
  });

  describe("with unsigned syncs opted in (INNGEST_ALLOW_UNSIGNED_SYNC)", () => {
    let app: RunningApp;
    beforeEach(async () => {
      app = await startApp(database, productionEnv(inngestApi.url, { INNGEST_ALLOW_UNSIGNED_SYNC: "true" }));
    });
    afterEach(async () => {
      await app.close();
    });

    it("an unsigned PUT re-announces only the pinned URL, without its deployId, a few times a minute", async () => {
      const res = await ping(app, { serverKind: "cloud", query: "?deployId=attacker&fnId=x" });
      expect(res.status).toBe(200);
      expect(inngestApi.registered).toHaveLength(1);
      const [registration] = inngestApi.registered as [Registration];
      expect(registration.body.url).toBe("https://shop.example/store/api/inngest");
      expect(registration.body.deployId).toBeUndefined();
      expect(registration.query.has("deployId")).toBe(false);

      // Asking for in-band does not get the config (that needs a signature) and still re-announces.
      const inBand = await ping(app, { serverKind: "cloud" }).set("X-Inngest-Sync-Kind", "in_band");
      expect(inBand.status).toBe(200);
      expect(inBand.body.functions).toBeUndefined();

      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await ping(app, { serverKind: "cloud" })).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(inngestApi.registered).toHaveLength(5);
      const limited = await ping(app, { serverKind: "cloud" });
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe("rate_limited");
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);

      // A signed sync is never rate-limited.
      expect((await ping(app, { serverKind: "cloud", signWith: signingKey })).status).toBe(200);
      expect(inngestApi.registered).toHaveLength(6);
    });
  });
});
