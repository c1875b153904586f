import request from "supertest";
import { buildApp } from "../../src/app";
import { parseConfig } from "../../src/config";
import { createServices, type Services } from "../../src/wiring";
import { createTestDatabase, type TestDatabase } from "../support/database";
import { captureLog } from "../support/log-capture";

/**
 * The browser's defences: a Content-Security-Policy the pages satisfy (scripts and styles from our
 * own origin only, nothing inline), no framing by another site (the console's confirm pages were
 * clickjackable), HSTS in production, and no Referer that could carry a customer link's signature.
 */

const adminToken = "headers-admin-token-0123456789";

const productionEnv = {
  NODE_ENV: "production",
  PUBLIC_URL: "https://shop.example",
  DATABASE_URL: "postgresql://app@db:5432/shop",
  STRIPE_SECRET_KEY: "sk_live_123",
  STRIPE_WEBHOOK_SECRET: "whsec_123",
  INNGEST_SIGNING_KEY: "signkey-prod-abc",
  INNGEST_ENCRYPTION_KEY: "an-encryption-key-of-32-characters-or-more",
  INNGEST_BASE_URL: "http://127.0.0.1:9",
  SMTP_URL: "smtp://127.0.0.1:9",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T/B/X",
  ADMIN_API_TOKEN: adminToken,
  LINK_SIGNING_SECRET: "a-link-signing-secret-of-32-characters",
  WEBHOOK_SECRETS_KEY: "a-webhook-secrets-key-of-32-characters",
  EASYPOST_API_KEY: "EZAK_live_123",
  EASYPOST_WEBHOOK_SECRET: "a-long-easypost-webhook-secret",
  WAREHOUSE_NAME: "Shop Warehouse",
  WAREHOUSE_STREET1: "417 Montgomery St",
  WAREHOUSE_CITY: "San Francisco",
  WAREHOUSE_ZIP: "94104",
  WAREHOUSE_COUNTRY: "US",
  METRICS_TOKEN: "a-metrics-token-0123456789",
  CHECKOUT_API_TOKEN: "a-checkout-token-0123456789",
};

async function servicesFor(env: Record<string, string>, database: TestDatabase): Promise<Services> {
  return createServices({
    config: parseConfig(env),
    logger: captureLog("warn").logger,
    endpoints: {
      databaseUrl: database.url,
      stripeSecretKey: "sk_test_headers",
      stripeWebhookSecret: "whsec_headers_0123456789",
      adminToken,
      // Never called: these tests only read pages.
      easyPost: { apiKey: "EZAK_live_123", apiBase: "http://127.0.0.1:9" },
      easyPostWebhookSecret: "a-long-easypost-webhook-secret",
    },
  });
}

function directives(csp: string | undefined): Map<string, string> {
  return new Map(
    (csp ?? "")
      .split(";")
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [name = "", ...values] = part.split(/\s+/);
        return [name, values.join(" ")];
      }),
  );
}

describe("security headers", () => {
  let database: TestDatabase;
  let production: Services;
  let development: Services;

  beforeAll(async () => {
    database = await createTestDatabase();
    production = await servicesFor(productionEnv, database);
    development = await servicesFor({ NODE_ENV: "test" }, database);
  });
  afterAll(async () => {
    await production.close();
    await development.close();
    await database.drop();
  });

  it("production pages carry a CSP with frame-ancestors, no framing, HSTS and Referrer-Policy", async () => {
    const app = buildApp(production);
    for (const path of ["/ops/login", "/", "/orders/3f1c2a9e-1111-4222-8333-444455556666?sig=x"]) {
      const res = await request(app).get(path);
      expect(res.headers["content-type"]).toContain("text/html");
      const csp = directives(res.headers["content-security-policy"]);
      expect(csp.get("default-src")).toBe("'self'");
      expect(csp.get("script-src")).toBe("'self'");
      expect(csp.get("style-src")).toBe("'self'");
      expect(csp.get("frame-ancestors")).toBe("'none'");
      expect(csp.get("object-src")).toBe("'none'");
      expect(csp.get("base-uri")).toBe("'none'");
      expect(csp.get("form-action")).toBe("'self'");
      expect(res.headers["content-security-policy"]).not.toContain("unsafe-inline");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(res.headers["strict-transport-security"]).toMatch(/^max-age=\d{8,}; includeSubDomains$/);
      expect(res.headers["referrer-policy"]).toBe("no-referrer");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
    }
    const api = await request(app).get("/api/products").expect(200);
    expect(api.headers["strict-transport-security"]).toBeDefined();
    expect(api.headers["referrer-policy"]).toBe("no-referrer");
  });

  it("no HSTS outside production (http://127.0.0.1 in development), the rest the same", async () => {
    const res = await request(buildApp(development)).get("/ops/login").expect(200);
    expect(res.headers["strict-transport-security"]).toBeUndefined();
    expect(directives(res.headers["content-security-policy"]).get("frame-ancestors")).toBe("'none'");
    expect(res.headers["content-security-policy"]).not.toContain("upgrade-insecure-requests");
    expect(res.headers["referrer-policy"]).toBe("no-referrer");
  });

  it("the pages satisfy the policy: no inline script or style, their stylesheet served from our origin", async () => {
    const app = buildApp(development);
    const page = await request(app).get("/ops/login").expect(200);
    expect(page.text).not.toMatch(/<style|\sstyle=|<script(?![^>]*\ssrc=)/);
    const stylesheet = /<link rel="stylesheet" href="(\/assets\/[^"]+\.css)"/.exec(page.text)?.[1];
    expect(stylesheet).toBeDefined();
    const css = await request(app).get(String(stylesheet)).expect(200);
    expect(css.headers["content-type"]).toContain("text/css");
    expect(css.text).toContain("box-sizing");
    expect(css.headers["cache-control"]).toContain("immutable");
  });
});
