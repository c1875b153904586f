import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, parseConfig } from "../src/config";

function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("config", () => {
  it("runs on embedded defaults with an empty environment outside production", () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      NODE_ENV: "development",
      PORT: 3000,
      LOG_LEVEL: "info",
      PAYMENT_CAPTURE: "manual",
      CANCEL_WINDOW: "1h",
      REVIEW_DELAY: "14d",
      REVIEW_AFTER_DELIVERY: "3d",
      useEmbeddedDatabase: true,
      isProduction: false,
    });
  });

  it("treats empty strings as unset", () => {
    expect(parseConfig({ DATABASE_URL: "", PORT: "" })).toMatchObject({
      useEmbeddedDatabase: true,
      PORT: 3000,
    });
  });

  it("names every missing variable at once in production", () => {
    const problems = problemsOf({ NODE_ENV: "production" });
    const names = problems.map((p) => p.split(":")[0]);
    expect(names).toEqual([
      "PUBLIC_URL",
      "DATABASE_URL",
      "STRIPE_SECRET_KEY",
      "STRIPE_WEBHOOK_SECRET",
      "INNGEST_SIGNING_KEY",
      "INNGEST_ENCRYPTION_KEY",
      "SMTP_URL",
      "SLACK_WEBHOOK_URL",
      "ADMIN_API_TOKEN",
      "LINK_SIGNING_SECRET",
      "WEBHOOK_SECRETS_KEY",
      "EASYPOST_API_KEY",
      "EASYPOST_WEBHOOK_SECRET",
      "WAREHOUSE_NAME",
      "WAREHOUSE_STREET1",
      "WAREHOUSE_CITY",
      "WAREHOUSE_ZIP",
      "WAREHOUSE_COUNTRY",
      "METRICS_TOKEN",
      "CHECKOUT_API_TOKEN",
      "INNGEST_EVENT_KEY",
    ]);
  });

  it("accepts a complete production environment with self-hosted Inngest instead of an event key", () => {
    const config = parseConfig({
      NODE_ENV: "production",
      PUBLIC_URL: "https://shop.example",
      DATABASE_URL: "postgresql://app@db:5432/shop",
      STRIPE_SECRET_KEY: "sk_live_123",
      STRIPE_WEBHOOK_SECRET: "whsec_123",
      INNGEST_SIGNING_KEY: "signkey-prod-abc",
      INNGEST_ENCRYPTION_KEY: "an-encryption-key-of-32-characters-or-more",
      INNGEST_BASE_URL: "http://inngest:8288",
      SMTP_URL: "smtp://mail:587",
      SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T/B/X",
      ADMIN_API_TOKEN: "a-long-admin-token-value",
      CHECKOUT_API_TOKEN: "a-long-checkout-token-value",
      LINK_SIGNING_SECRET: "a-link-signing-secret-of-32-characters",
      WEBHOOK_SECRETS_KEY: "a-webhook-secrets-key-of-32-characters",
      EASYPOST_API_KEY: "EZAK_live_123",
      EASYPOST_WEBHOOK_SECRET: "a-long-easypost-webhook-secret",
      WAREHOUSE_NAME: "Shop Warehouse",
      WAREHOUSE_STREET1: "417 Montgomery St",
      WAREHOUSE_CITY: "San Francisco",
      WAREHOUSE_STATE: "CA",
      WAREHOUSE_ZIP: "94104",
      WAREHOUSE_COUNTRY: "US",
      METRICS_TOKEN: "a-long-metrics-token",
    });
    expect(config.isProduction).toBe(true);
    expect(config.useEmbeddedDatabase).toBe(false);
    // Containers publish the port: all interfaces in production.
    expect(config.HOST).toBe("0.0.0.0");
  });

  it("Dev mode runs unsigned steps, listening on all interfaces: HOST defaults to loopback outside production", () => {
    expect(parseConfig({}).HOST).toBe("127.0.0.1");
    expect(parseConfig({ NODE_ENV: "test" }).HOST).toBe("127.0.0.1");
    expect(parseConfig({ HOST: "0.0.0.0" }).HOST).toBe("0.0.0.0");
  });

  it("reports every malformed variable with the reason", () => {
    const problems = problemsOf({
      PORT: "eighty",
      DATABASE_URL: "mysql://nope",
      PAYMENT_CAPTURE: "later",
      REVIEW_DELAY: "two weeks",
      STRIPE_WEBHOOK_SECRET: "secret",
    });
    expect(problems.map((p) => p.split(":")[0]).sort()).toEqual(
      ["DATABASE_URL", "PAYMENT_CAPTURE", "PORT", "REVIEW_DELAY", "STRIPE_WEBHOOK_SECRET"].sort(),
    );
  });

  it("says what was wrong with a port and what to send instead (PORT=abc)", () => {
    expect(problemsOf({ PORT: "abc" })).toEqual([
      'PORT: must be a port number from 0 to 65535, such as 3000 (got "abc")',
    ]);
    expect(problemsOf({ LOCAL_ENGINE_PORT: "70000" })).toEqual([
      "LOCAL_ENGINE_PORT: must be a port number from 0 to 65535, such as 8288",
    ]);
    expect(parseConfig({ PORT: "0" }).PORT).toBe(0);
  });

  it("refuses stand-in switches in production", () => {
    const problems = problemsOf({
      NODE_ENV: "production",
      INNGEST_DEV: "1",
      STRIPE_API_BASE: "http://127.0.0.1:12111",
      EASYPOST_API_BASE: "http://127.0.0.1:12112/v2/",
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^INNGEST_DEV:/),
        expect.stringMatching(/^STRIPE_API_BASE:/),
        expect.stringMatching(/^EASYPOST_API_BASE:/),
      ]),
    );
  });

  it("ships with EasyPost only: any other SHIPPING_CARRIER fails fast, in every environment", () => {
    expect(parseConfig({}).SHIPPING_CARRIER).toBe("easypost");
    for (const NODE_ENV of ["development", "test", "production"]) {
      expect(problemsOf({ NODE_ENV, SHIPPING_CARRIER: "fedex" })).toEqual(
        expect.arrayContaining([expect.stringMatching(/^SHIPPING_CARRIER: must be easypost/)]),
      );
    }
  });

  it("reads the shipping countries and service level as comma lists", () => {
    expect(parseConfig({ SHIPPING_COUNTRIES: "US,CA,GB" }).SHIPPING_COUNTRIES).toBe("US,CA,GB");
    expect(problemsOf({ SHIPPING_COUNTRIES: "usa" })[0]).toMatch(/^SHIPPING_COUNTRIES:/);
  });

  it("reads the shop's brand, with defaults that read well, and names every bad brand variable at once", () => {
    const defaults = parseConfig({});
    expect([defaults.SHOP_NAME, defaults.SHOP_ACCENT_COLOR]).toEqual(["Online shop", "#635bff"]);
    expect(defaults.EMAIL_FROM).toBe('"Online shop" <orders@shop.example>');
    const shop = parseConfig({ SHOP_NAME: 'Acme "Coffee", Inc.', SHOP_ACCENT_COLOR: "#0A7D4F" });
    expect(shop.EMAIL_FROM).toBe('"Acme Coffee, Inc." <orders@shop.example>');
    expect(parseConfig({ EMAIL_FROM: "Acme <hi@acme.example>" }).EMAIL_FROM).toBe("Acme <hi@acme.example>");
    expect(
      problemsOf({
        SHOP_ACCENT_COLOR: "red; background:url(x)",
        SHOP_LOGO_URL: "javascript:alert(1)",
        SHOP_SUPPORT_EMAIL: "not-an-address",
        SHOP_SUPPORT_URL: "ftp://files.example",
        SHOP_NAME: "x".repeat(81),
      }),
    ).toEqual([
      expect.stringMatching(/^SHOP_NAME: must be at most 80 characters/),
      expect.stringMatching(/^SHOP_LOGO_URL: must be an http\(s\) URL/),
      expect.stringMatching(/^SHOP_ACCENT_COLOR: must be a hex colour/),
      expect.stringMatching(/^SHOP_SUPPORT_EMAIL: must be an e-mail address/),
      expect.stringMatching(/^SHOP_SUPPORT_URL: must be an http\(s\) URL/),
    ]);
  });

  describe("CHECKOUT_LIVE_RATES", () => {
    it("is off by default, with no markup, no rounding and a 5 s wait", () => {
      expect(parseConfig({})).toMatchObject({
        CHECKOUT_LIVE_RATES: "off",
        CHECKOUT_LIVE_RATES_MARKUP_PERCENT: 0,
        CHECKOUT_LIVE_RATES_ROUND_UP_TO: 1,
        CHECKOUT_LIVE_RATES_TIMEOUT: "5s",
      });
      expect(
        parseConfig({
          CHECKOUT_LIVE_RATES: "fastest,cheapest",
          CHECKOUT_LIVE_RATES_MARKUP_PERCENT: "12.5",
          CHECKOUT_LIVE_RATES_ROUND_UP_TO: "100",
        }),
      ).toMatchObject({
        CHECKOUT_LIVE_RATES: "fastest,cheapest",
        CHECKOUT_LIVE_RATES_MARKUP_PERCENT: 12.5,
        CHECKOUT_LIVE_RATES_ROUND_UP_TO: 100,
      });
    });

    it("fails fast on a policy word it does not know, a negative markup or a rounding below 1", () => {
      expect(
        problemsOf({
          CHECKOUT_LIVE_RATES: "cheapest,slowest",
          CHECKOUT_LIVE_RATES_MARKUP_PERCENT: "-5",
          CHECKOUT_LIVE_RATES_ROUND_UP_TO: "0",
        }),
      ).toEqual([
        expect.stringMatching(/^CHECKOUT_LIVE_RATES: must be off, or cheapest and\/or fastest/),
        expect.stringMatching(/^CHECKOUT_LIVE_RATES_MARKUP_PERCENT: /),
        expect.stringMatching(/^CHECKOUT_LIVE_RATES_ROUND_UP_TO: /),
      ]);
    });
  });

  describe("SHIPPING_RATE_TABLE", () => {
    const table = {
      currency: "usd",
      zones: [
        {
          name: "US",
          destinations: [{ country: "US" }],
          rates: [{ id: "std", displayName: "Standard", pricing: { type: "flat", amount: 500 } }],
        },
      ],
    };

    it("is unset by default (no shipping charged) and takes the table as JSON or a file's path", () => {
      expect(parseConfig({}).SHIPPING_RATE_TABLE).toBeUndefined();
      expect(parseConfig({ SHIPPING_RATE_TABLE: JSON.stringify(table) }).SHIPPING_RATE_TABLE).toEqual(table);
      const dir = mkdtempSync(join(tmpdir(), "rates-"));
      const file = join(dir, "rates.json");
      writeFileSync(file, JSON.stringify(table));
      expect(parseConfig({ SHIPPING_RATE_TABLE: file }).SHIPPING_RATE_TABLE).toEqual(table);
    });

    it("fails fast naming the variable when the table is invalid or unreadable", () => {
      const invalid = problemsOf({
        SHIPPING_RATE_TABLE: JSON.stringify({ ...table, currency: "USD" }),
      });
      expect(invalid).toEqual([expect.stringMatching(/^SHIPPING_RATE_TABLE: currency: /)]);
      expect(problemsOf({ SHIPPING_RATE_TABLE: "{ not json" })).toEqual([
        expect.stringMatching(/^SHIPPING_RATE_TABLE: must be a rate table as JSON/),
      ]);
      expect(problemsOf({ SHIPPING_RATE_TABLE: "/nonexistent/rates.json" })).toEqual([
        expect.stringMatching(/^SHIPPING_RATE_TABLE: cannot read the file \/nonexistent\/rates.json/),
      ]);
    });
  });
});
