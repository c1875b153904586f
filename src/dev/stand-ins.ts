import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { ResolvedEndpoints } from "../wiring";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { createEngineClock, createLocalEngine, type LocalEngine } from "./inngest-engine";
import { createEasyPostSandbox, type EasyPostSandbox } from "./easypost-sandbox";
import { createStripeSandbox, generateWebhookSecret, type StripeSandbox } from "./stripe-sandbox";

/**
 * Starts an embedded stand-in for whatever the configuration leaves unset, so that `npm start`
 * works offline with no configuration. Production never gets here with a gap: config validation
 * requires every real endpoint there, and this function refuses anyway.
 */
export interface StandIns {
  endpoints: ResolvedEndpoints;
  embeddedDatabase: boolean;
  /** The stand-ins that were started, for the demo to drive (clock, customer actions). */
  localEngine?: LocalEngine;
  stripeSandbox?: StripeSandbox;
  easyPostSandbox?: EasyPostSandbox;
  /** Points the stand-ins at the running app (webhook deliveries, engine sync). */
  attachApp(appUrl: string): Promise<void>;
  stop(): Promise<void>;
}

const sandboxSecretKey = "sk_test_sandbox";

function devSecret(): string {
  return randomBytes(24).toString("base64url");
}

export async function startStandIns(config: Config, logger: Logger): Promise<StandIns> {
  const stops: (() => Promise<void>)[] = [];
  const onAttach: ((appUrl: string) => Promise<void>)[] = [];
  const refuseInProduction = (what: string) => {
    if (config.isProduction)
      throw new Error(`Refusing to start the embedded ${what} with NODE_ENV=production`);
  };

  let databaseUrl = config.DATABASE_URL;
  if (databaseUrl === undefined) {
    refuseInProduction("database");
    const embedded = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, logger });
    stops.push(embedded.stop);
    databaseUrl = embedded.url;
  }

  const stripeWebhookSecret = config.STRIPE_WEBHOOK_SECRET ?? generateWebhookSecret();
  let stripeSecretKey = config.STRIPE_SECRET_KEY;
  let stripeSandbox: StripeSandbox | undefined;
  let stripeApiBase = config.STRIPE_API_BASE;
  if (stripeSecretKey === undefined) {
    refuseInProduction("Stripe stand-in");
    const sandbox = createStripeSandbox({
      webhookSecret: stripeWebhookSecret,
      logger,
      stateFile: path.resolve(config.DATA_DIR, "stripe-sandbox.json"),
      // Holds placed days ago (the state file persists) lapse as at Stripe.
      expiryIntervalMs: 60_000,
    });
    const { url } = await sandbox.listen(config.STRIPE_SANDBOX_PORT, "127.0.0.1");
    logger.info({ url }, "Stripe stand-in started (no STRIPE_SECRET_KEY)");
    stops.push(() => sandbox.close());
    onAttach.push(async (appUrl) => sandbox.setWebhookUrl(`${appUrl}/api/stripe/webhook`));
    stripeSandbox = sandbox;
    stripeSecretKey = sandboxSecretKey;
    stripeApiBase = url;
  }

  let localEngineUrl: string | undefined;
  let localEngine: LocalEngine | undefined;
  const inngestConfigured =
    config.INNGEST_DEV !== undefined ||
    config.INNGEST_BASE_URL !== undefined ||
    config.INNGEST_EVENT_KEY !== undefined ||
    config.INNGEST_SIGNING_KEY !== undefined;
  if (!inngestConfigured) {
    refuseInProduction("local engine");
    const engine = createLocalEngine({
      databaseUrl,
      // The engine names itself (component: "local-engine"); a second child here would log it twice.
      logger,
      clock: createEngineClock({ timeScale: config.LOCAL_ENGINE_TIME_SCALE }),
      checkpointing: config.LOCAL_ENGINE_CHECKPOINTING,
    });
    const { url } = await engine.listen(config.LOCAL_ENGINE_PORT, "127.0.0.1");
    logger.info({ url }, "local engine (Inngest-compatible) started (no Inngest configuration)");
    stops.push(() => engine.close());
    onAttach.push((appUrl) => engine.sync(`${appUrl}${config.INNGEST_SERVE_PATH}`));
    localEngineUrl = url;
    localEngine = engine;
  }

  // The carrier: EasyPost's stand-in when no key is set, so development runs production's code path.
  let easyPostApiKey = config.EASYPOST_API_KEY;
  let easyPostApiBase = config.EASYPOST_API_BASE;
  const easyPostWebhookSecret = config.EASYPOST_WEBHOOK_SECRET ?? devSecret();
  let easyPostSandbox: EasyPostSandbox | undefined;
  if (config.SHIPPING_CARRIER === "easypost" && easyPostApiKey === undefined) {
    refuseInProduction("EasyPost stand-in");
    const sandbox = createEasyPostSandbox({
      webhookSecret: easyPostWebhookSecret,
      logger,
      stateFile: path.resolve(config.DATA_DIR, "easypost-sandbox.json"),
    });
    const { url } = await sandbox.listen(config.EASYPOST_SANDBOX_PORT, "127.0.0.1");
    logger.info({ url }, "EasyPost stand-in started (no EASYPOST_API_KEY)");
    stops.push(() => sandbox.close());
    onAttach.push(async (appUrl) => sandbox.setWebhookUrl(`${appUrl}/api/carrier/webhook`));
    easyPostSandbox = sandbox;
    easyPostApiKey = "EZTK_sandbox";
    easyPostApiBase = sandbox.apiBase;
  }

  const adminToken = config.ADMIN_API_TOKEN ?? devSecret();
  // The sandbox carrier's own signature is for development only: production gets none.
  const carrierWebhookSecret = config.isProduction
    ? config.CARRIER_WEBHOOK_SECRET
    : (config.CARRIER_WEBHOOK_SECRET ?? devSecret());
  const generated = {
    ...(config.ADMIN_API_TOKEN ? {} : { ADMIN_API_TOKEN: adminToken }),
    ...(config.CARRIER_WEBHOOK_SECRET || config.isProduction
      ? {}
      : { CARRIER_WEBHOOK_SECRET: carrierWebhookSecret }),
    ...(config.EASYPOST_WEBHOOK_SECRET ? {} : { EASYPOST_WEBHOOK_SECRET: easyPostWebhookSecret }),
    ...(config.STRIPE_WEBHOOK_SECRET ? {} : { STRIPE_WEBHOOK_SECRET: stripeWebhookSecret }),
  };
  if (Object.keys(generated).length > 0) {
    refuseInProduction("development secrets");
    // Written to a file rather than logged: secrets never reach the logs.
    const file = path.resolve(config.DATA_DIR, "dev-secrets.json");
    await mkdir(config.DATA_DIR, { recursive: true });
    await writeFile(file, `${JSON.stringify(generated, null, 2)}\n`, { mode: 0o600 });
    logger.info(
      { file, variables: Object.keys(generated) },
      "generated development secrets for unset variables",
    );
  }

  return {
    endpoints: {
      databaseUrl,
      stripeSecretKey,
      stripeApiBase,
      stripeWebhookSecret,
      ...(localEngineUrl ? { localEngineUrl } : {}),
      adminToken,
      ...(carrierWebhookSecret ? { carrierWebhookSecret } : {}),
      ...(easyPostApiKey
        ? { easyPost: { apiKey: easyPostApiKey, ...(easyPostApiBase ? { apiBase: easyPostApiBase } : {}) } }
        : {}),
      easyPostWebhookSecret,
    },
    embeddedDatabase: config.useEmbeddedDatabase,
    ...(localEngine ? { localEngine } : {}),
    ...(stripeSandbox ? { stripeSandbox } : {}),
    ...(easyPostSandbox ? { easyPostSandbox } : {}),
    async attachApp(appUrl) {
      for (const attach of onAttach) await attach(appUrl);
    },
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
