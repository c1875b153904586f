import { existsSync } from "node:fs";
import path from "node:path";
import type { Config } from "../config";
import type { Logger } from "../logger";
import type { DevelopmentEnvironment } from "../server";
import { checkDatabaseReachable, checkPortsFree, StartupError } from "../startup-checks";
import type { ResolvedEndpoints } from "../wiring";
import { DataDirInUseError, devSecretsFile, loadDevSecrets, lockDataDir, prepareDataDir } from "./data-dir";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { exitWhenDataDirGoes, exitWhenParentGoes } from "./supervision";
import { createEasyPostSandbox, type EasyPostSandbox } from "./easypost-sandbox";
import { createEngineClock, createLocalEngine, type LocalEngine } from "./inngest-engine";
import { createStripeSandbox, type StripeSandbox } from "./stripe-sandbox";

/**
 * Starts an embedded stand-in for whatever the configuration leaves unset, so that `npm start`
 * works offline with no configuration. Only the development entry point (src/dev/main.ts), the demo
 * and the tests reach this module; the production build does not contain it.
 *
 * Order matters for a person at the terminal: take DATA_DIR (a second service on the same folder
 * stops here, before any port or database is opened), check the ports and DATABASE_URL (one line
 * naming the variable), then the slow work (the embedded cluster's first initdb).
 */
export interface StandIns extends DevelopmentEnvironment {
  endpoints: ResolvedEndpoints;
  embeddedDatabase: boolean;
  /** The stand-ins that were started, for the demo to drive (clock, customer actions). */
  localEngine?: LocalEngine;
  stripeSandbox?: StripeSandbox;
  easyPostSandbox?: EasyPostSandbox;
}

const sandboxSecretKey = "sk_test_sandbox";

export async function startStandIns(
  config: Config,
  logger: Logger,
  options: {
    progress?: (line: string) => void;
    /**
     * The service owns this process (`npm start`, src/dev/main.ts): it stops when its parent is
     * gone or DATA_DIR is deleted. Off where the stand-ins run inside another program (the demo, tests).
     */
    ownsProcess?: boolean;
  } = {},
): Promise<StandIns> {
  const progress = options.progress ?? (() => undefined);
  if (config.isProduction) {
    throw new StartupError("the development stand-ins do not start with NODE_ENV=production");
  }
  const stops: (() => Promise<void>)[] = [];
  const onAttach: ((appUrl: string) => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };

  const dataDir = prepareDataDir(config.DATA_DIR);
  let lock;
  try {
    lock = lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirInUseError) throw new StartupError(error.message);
    throw error;
  }
  stops.push(async () => lock.release());
  if (options.ownsProcess) {
    const unwatchDataDir = exitWhenDataDirGoes(path.join(dataDir, "service.pid"), dataDir, logger);
    const unwatchParent = exitWhenParentGoes(logger);
    stops.push(async () => {
      unwatchDataDir();
      unwatchParent();
    });
  }

  try {
    const startsSandbox = config.STRIPE_SECRET_KEY === undefined;
    const startsEngine =
      config.INNGEST_DEV === undefined &&
      config.INNGEST_BASE_URL === undefined &&
      config.INNGEST_EVENT_KEY === undefined &&
      config.INNGEST_SIGNING_KEY === undefined;
    // The stand-ins whose pages a browser opens (the pay page, label and return-label links)
    // listen where the app does: loopback by default, every interface in a container (HOST=0.0.0.0,
    // docker-compose.yml), whose published ports stay on the machine's 127.0.0.1. The local engine
    // only talks to this process: loopback always.
    const standInHost = config.HOST;
    await checkPortsFree([
      { variable: "PORT", port: config.PORT, host: config.HOST },
      ...(startsSandbox
        ? [{ variable: "STRIPE_SANDBOX_PORT", port: config.STRIPE_SANDBOX_PORT, host: standInHost }]
        : []),
      ...(startsEngine
        ? [{ variable: "LOCAL_ENGINE_PORT", port: config.LOCAL_ENGINE_PORT, host: "127.0.0.1" }]
        : []),
      ...(config.EASYPOST_API_KEY === undefined
        ? [{ variable: "EASYPOST_SANDBOX_PORT", port: config.EASYPOST_SANDBOX_PORT, host: standInHost }]
        : []),
    ]);
    if (config.DATABASE_URL !== undefined) await checkDatabaseReachable(config.DATABASE_URL);

    const { secrets, created } = await loadDevSecrets(dataDir);
    const secretsFile = devSecretsFile(dataDir);
    if (created.length > 0) {
      // Written to a file rather than logged: secrets never reach the logs.
      logger.info({ file: secretsFile, variables: created }, "generated development secrets");
    }

    let databaseUrl = config.DATABASE_URL;
    if (databaseUrl === undefined) {
      if (existsSync(path.join(dataDir, "pglite"))) {
        logger.warn(
          { dir: path.join(dataDir, "pglite") },
          "found a PGlite database from an older version: it is no longer read (the embedded database is now PostgreSQL in DATA_DIR/postgres); delete the folder when you no longer need it",
        );
      }
      const embedded = await startEmbeddedPostgres({
        dir: path.join(dataDir, "postgres"),
        password: secrets.EMBEDDED_POSTGRES_PASSWORD,
        logger,
        onProgress: progress,
      });
      stops.push(embedded.stop);
      databaseUrl = embedded.url;
    }

    const stripeWebhookSecret = config.STRIPE_WEBHOOK_SECRET ?? secrets.STRIPE_WEBHOOK_SECRET;
    let stripeSecretKey = config.STRIPE_SECRET_KEY;
    let stripeSandbox: StripeSandbox | undefined;
    let stripeApiBase = config.STRIPE_API_BASE;
    if (startsSandbox) {
      progress("starting the Stripe stand-in");
      const sandbox = createStripeSandbox({
        webhookSecret: stripeWebhookSecret,
        logger,
        businessName: config.SHOP_NAME,
        stateFile: path.join(dataDir, "stripe-sandbox.json"),
        // Holds placed days ago (the state file persists) lapse as at Stripe.
        expiryIntervalMs: 60_000,
      });
      const { url } = await sandbox.listen(config.STRIPE_SANDBOX_PORT, standInHost);
      logger.info({ url }, "Stripe stand-in started (no STRIPE_SECRET_KEY)");
      stops.push(() => sandbox.close());
      onAttach.push(async (appUrl) => sandbox.setWebhookUrl(`${appUrl}/api/stripe/webhook`));
      stripeSandbox = sandbox;
      stripeSecretKey = sandboxSecretKey;
      stripeApiBase = url;
    }

    // The carrier: EasyPost's stand-in when no key is set, so development runs production's code path.
    let easyPostApiKey = config.EASYPOST_API_KEY;
    let easyPostApiBase = config.EASYPOST_API_BASE;
    const easyPostWebhookSecret = config.EASYPOST_WEBHOOK_SECRET ?? secrets.EASYPOST_WEBHOOK_SECRET;
    let easyPostSandbox: EasyPostSandbox | undefined;
    if (easyPostApiKey === undefined) {
      progress("starting the EasyPost stand-in");
      const sandbox = createEasyPostSandbox({
        webhookSecret: easyPostWebhookSecret,
        logger,
        stateFile: path.join(dataDir, "easypost-sandbox.json"),
        // A label refund is processed a minute after it is asked (EasyPost: 15 to 30 days for USPS),
        // so a developer sees it move from submitted to refunded.
        refundProcessingMs: 60_000,
      });
      const { url } = await sandbox.listen(config.EASYPOST_SANDBOX_PORT, standInHost);
      logger.info({ url }, "EasyPost stand-in started (no EASYPOST_API_KEY)");
      stops.push(() => sandbox.close());
      onAttach.push(async (appUrl) => sandbox.setWebhookUrl(`${appUrl}/api/carrier/webhook`));
      easyPostSandbox = sandbox;
      easyPostApiKey = "EZTK_sandbox";
      easyPostApiBase = sandbox.apiBase;
    }

    let localEngineUrl: string | undefined;
    let localEngine: LocalEngine | undefined;
    if (startsEngine) {
      progress("starting the local engine (Inngest-compatible)");
      // Signed calls, checked by serve() exactly as in production: a forged step call is refused.
      const engine = createLocalEngine({
        databaseUrl,
        // The engine names itself (component: "local-engine"); a second child here would log it twice.
        logger,
        clock: createEngineClock({ timeScale: config.LOCAL_ENGINE_TIME_SCALE }),
        checkpointing: config.LOCAL_ENGINE_CHECKPOINTING,
        signingKey: secrets.INNGEST_SIGNING_KEY,
        syncKind: config.LOCAL_ENGINE_SYNC,
      });
      const { url } = await engine.listen(config.LOCAL_ENGINE_PORT, "127.0.0.1");
      logger.info({ url }, "local engine (Inngest-compatible) started (no Inngest configuration)");
      stops.push(() => engine.close());
      onAttach.push((appUrl) => engine.sync(`${appUrl}${config.INNGEST_SERVE_PATH}`));
      localEngineUrl = url;
      localEngine = engine;
    }

    const banner = (appUrl: string): string[] => [
      `order-fulfillment is ready (development, data in ${dataDir})`,
      `  API                ${appUrl}   (health: ${appUrl}/readyz)`,
      ...(stripeApiBase && stripeSandbox
        ? [
            `  Stripe stand-in    ${stripeApiBase}   (pay page: ${stripeApiBase}/_sandbox/pay/<checkout session id>)`,
          ]
        : []),
      ...(easyPostSandbox
        ? [`  EasyPost stand-in  ${easyPostApiBase}   (carrier: labels and trackers)`]
        : []),
      ...(localEngineUrl
        ? [`  Inngest engine     ${localEngineUrl}   (runs: ${localEngineUrl}/v1/runs)`]
        : []),
      config.SMTP_URL === undefined
        ? `  E-mail outbox      ${path.resolve(config.DATA_DIR, "outbox")}   (read them at ${appUrl}/dev/outbox)`
        : `  E-mail             SMTP_URL`,
      config.ADMIN_API_TOKEN === undefined
        ? `  Admin token        ADMIN_API_TOKEN in ${secretsFile}   (ops console: ${appUrl}/ops)`
        : `  Admin token        ADMIN_API_TOKEN (from the environment)`,
      `  Try it             npm run demo   (a scripted run on its own data folder)`,
    ];

    return {
      endpoints: {
        databaseUrl,
        stripeSecretKey: stripeSecretKey ?? sandboxSecretKey,
        stripeApiBase,
        stripeWebhookSecret,
        ...(localEngineUrl ? { localEngineUrl, localEngineSigningKey: secrets.INNGEST_SIGNING_KEY } : {}),
        adminToken: config.ADMIN_API_TOKEN ?? secrets.ADMIN_API_TOKEN,
        ...(config.ADMIN_API_TOKEN === undefined ? { adminTokenFile: secretsFile } : {}),
        ...(easyPostApiKey
          ? { easyPost: { apiKey: easyPostApiKey, ...(easyPostApiBase ? { apiBase: easyPostApiBase } : {}) } }
          : {}),
        easyPostWebhookSecret,
      },
      embeddedDatabase: config.useEmbeddedDatabase,
      ...(localEngine ? { localEngine } : {}),
      ...(stripeSandbox ? { stripeSandbox } : {}),
      ...(easyPostSandbox ? { easyPostSandbox } : {}),
      banner,
      async attachApp(appUrl) {
        for (const attach of onAttach) await attach(appUrl);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
