import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { randomUUID } from "node:crypto";
import type Stripe from "stripe";
import { ConfigError, configVariableNames, parseConfig } from "../src/config";
import { isRefundEvent, refundEventTypes } from "../src/orders/intake/refund-events";
import { isRiskEvent, riskEventTypes } from "../src/orders/intake/risk-events";
import { orderKeyOf } from "../src/orders/intake/stripe-event-plan";

/**
 * The configuration's documentation cannot drift from src/config.ts: docs/configuration.md has one
 * row per variable the schema reads (and none it does not), its literal defaults are the schema's,
 * and its production marks are what the production check does. `.env.example` is a production
 * configuration once its secrets are filled, and the README's "Go live" names every variable
 * production requires.
 */
const root = path.resolve(__dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

interface DocumentedVariable {
  name: string;
  defaultCell: string;
  production: string;
}

function documentedVariables(): DocumentedVariable[] {
  return read("docs/configuration.md")
    .split("\n")
    .filter((line) => /^\|\s*`[A-Z][A-Z0-9_]*`\s*\|/.test(line))
    .map((line) => {
      const cells = line
        .split("|")
        .slice(1, -1)
        .map((cell) => cell.trim());
      return {
        name: (cells[0] ?? "").replace(/`/g, ""),
        defaultCell: cells[1] ?? "",
        production: cells[2] ?? "",
      };
    });
}

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

/** Values of the right shape for the secrets `.env.example` leaves empty (never real ones). */
const testSecrets: Record<string, string> = {
  DATABASE_URL: "postgresql://shop:test-password@db.internal:5432/shop",
  STRIPE_SECRET_KEY: "sk_test_example",
  STRIPE_WEBHOOK_SECRET: "whsec_test_example",
  INNGEST_EVENT_KEY: "test-event-key",
  INNGEST_SIGNING_KEY: "signkey-test-0123456789abcdef",
  INNGEST_ENCRYPTION_KEY: "test-encryption-key-0123456789-abcdef",
  SMTP_URL: "smtps://user:test-password@smtp.example.com:465",
  SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T000/B000/test",
  ADMIN_API_TOKEN: "test-admin-token-0123456789-abcdef",
  LINK_SIGNING_SECRET: "test-link-secret-0123456789-abcdef",
  WEBHOOK_SECRETS_KEY: "test-webhook-secrets-key-0123456789",
  METRICS_TOKEN: "test-metrics-token-0123456789",
  CHECKOUT_API_TOKEN: "test-checkout-token-0123456789",
  EASYPOST_API_KEY: "EZAK_test_example",
  EASYPOST_WEBHOOK_SECRET: "test-easypost-secret-0123",
};

const example = parseEnv(read(".env.example")) as Record<string, string>;
const filled = Object.fromEntries(
  Object.entries(example).map(([name, value]) => [name, value === "" ? testSecrets[name] : value]),
);

describe("docs/configuration.md", () => {
  const documented = documentedVariables();

  it("has one row for every variable src/config.ts reads, and none other", () => {
    const names = documented.map((row) => row.name);
    expect(names.filter((name, index) => names.indexOf(name) !== index)).toEqual([]);
    expect([...names].sort()).toEqual([...configVariableNames].sort());
  });

  it("gives the schema's default wherever the schema has one", () => {
    const defaults = parseConfig({}) as unknown as Record<string, unknown>;
    const wrong = documented
      .filter((row) => defaults[row.name] !== undefined)
      .map((row) => ({ name: row.name, documented: /`([^`]*)`/.exec(row.defaultCell)?.[1] }))
      .filter(({ name, documented }) => documented !== String(defaults[name]));
    expect(wrong).toEqual([]);
  });

  it("marks required exactly the variables production refuses to start without", () => {
    const required = documented.filter((row) => row.production.startsWith("required")).map((row) => row.name);
    expect(problemsOf(filled)).toEqual([]);
    for (const row of documented) {
      const without = { ...filled, [row.name]: undefined };
      const named = problemsOf(without).some((problem) => problem.startsWith(`${row.name}:`));
      expect({ name: row.name, refusedWhenUnset: named }).toEqual({
        name: row.name,
        refusedWhenUnset: required.includes(row.name),
      });
    }
  });

  it("marks 'must be unset' exactly the variables production refuses when set", () => {
    const validValues: Record<string, string> = {
      INNGEST_DEV: "1",
      STRIPE_API_BASE: "http://127.0.0.1:12111",
      EASYPOST_API_BASE: "http://127.0.0.1:12112/v2/",
    };
    const forbidden = documented.filter((row) => row.production === "must be unset").map((row) => row.name);
    expect(forbidden.sort()).toEqual(Object.keys(validValues).sort());
    for (const name of forbidden) {
      expect(problemsOf({ ...filled, [name]: validValues[name] })).toEqual([
        expect.stringMatching(new RegExp(`^${name}: must not be set when NODE_ENV=production`)),
      ]);
    }
  });
});

describe(".env.example", () => {
  it("names only variables the service reads, for production", () => {
    expect(Object.keys(example).filter((name) => !configVariableNames.includes(name))).toEqual([]);
    expect(example.NODE_ENV).toBe("production");
  });

  it("is refused as it stands, naming each secret left to fill", () => {
    const empty = Object.keys(example).filter((name) => example[name] === "");
    expect(empty.sort()).toEqual(Object.keys(testSecrets).sort());
    const named = problemsOf(example).map((problem) => problem.split(":")[0]);
    expect([...new Set(named)].sort()).toEqual(empty.sort());
  });

  it("passes the production check once its secrets are filled", () => {
    const config = parseConfig(filled);
    expect(config).toMatchObject({ isProduction: true, HOST: "0.0.0.0", useEmbeddedDatabase: false });
  });
});

describe("README", () => {
  const readme = read("README.md");

  it("is at most 15 KB", () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(15 * 1024);
  });

  it('names in "Go live" every variable production requires', () => {
    const goLive = readme.slice(
      readme.indexOf("## Go live"),
      readme.indexOf("\n## ", readme.indexOf("## Go live") + 1),
    );
    expect(goLive.length).toBeGreaterThan(0);
    const required = documentedVariables()
      .filter((row) => row.production.startsWith("required"))
      .map((row) => row.name);
    expect(required.filter((name) => !goLive.includes(`\`${name}\``))).toEqual([]);
  });

  it("lists for the Stripe webhook every event the intake handles, and only those", () => {
    const goLive = readme.slice(readme.indexOf("## Go live"));
    const listed = goLive
      .slice(goLive.indexOf("**Stripe webhook**"), goLive.indexOf("**EasyPost webhook**"))
      .match(/`[a-z_]+(\.[a-z_]+)+`/g)
      ?.map((name) => name.replace(/`/g, ""));
    const handled = (type: string) => {
      const event = { type, data: { object: { id: "x", metadata: { orderId: randomUUID() } } } };
      const key = orderKeyOf(event as unknown as Stripe.Event);
      return (
        !("ignore" in key) ||
        isRefundEvent(event as unknown as Stripe.Event) ||
        isRiskEvent(event as unknown as Stripe.Event)
      );
    };
    expect(listed?.filter((type) => !handled(type))).toEqual([]);
    expect([...refundEventTypes, ...riskEventTypes].filter((type) => !listed?.includes(type))).toEqual([]);
  });

  it("links every page in docs/, and every link to a file resolves", () => {
    const docs = readdirMarkdown("docs");
    const indexed = read("docs/README.md");
    expect(docs.filter((file) => file !== "README.md" && !indexed.includes(`](${file})`))).toEqual([]);
    expect(docs.filter((file) => !readme.includes(`docs/${file}`))).toEqual([]);
    const targets = [
      ...readme.matchAll(/\]\(((?:docs|src|test|scripts)\/[^)#\s]+|\.env\.example)(?:#[^)]*)?\)/g),
    ].map((match) => match[1] as string);
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((target) => !exists(target))).toEqual([]);
  });
});

function readdirMarkdown(dir: string): string[] {
  return readdirSync(path.join(root, dir)).filter((file) => file.endsWith(".md"));
}

const exists = (file: string): boolean => existsSync(path.join(root, file));
