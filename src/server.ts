import type { DestinationStream } from "pino";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { buildApp } from "./app";
import { ConfigError, loadConfig, type Config } from "./config";
import { migrate } from "./db/migrator";
import { seedDemoCatalogIfEmpty } from "./db/seed";
import { createLogger, type Logger } from "./logger";
import { checkDatabaseReachable, checkPortFree, StartupError } from "./startup-checks";
import { createServices, type ResolvedEndpoints } from "./wiring";

/**
 * Owns the process: configuration, listening, signals and graceful shutdown. This file is the
 * production entry point (`node dist/server.js`) and starts no stand-in: development's entry point,
 * src/dev/main.ts, passes `startDevelopment`, and src/dev is not part of the production build.
 */

const shutdownDeadlineMs = 10_000;

/** What the development entry point starts in place of unset integrations. */
export interface DevelopmentEnvironment {
  endpoints: ResolvedEndpoints;
  /** The database is the embedded one: seed the demo catalog. */
  embeddedDatabase: boolean;
  /** Lines printed for a person once the service answers. */
  banner?(appUrl: string): string[];
  /** Points the stand-ins at the running app (webhook deliveries, engine sync). */
  attachApp(appUrl: string): Promise<void>;
  stop(): Promise<void>;
}

export type DevelopmentStarter = (
  config: Config,
  logger: Logger,
  options: { progress: (line: string) => void },
) => Promise<DevelopmentEnvironment>;

function readConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Production: every endpoint comes from the configuration. */
function configuredEndpoints(config: Config): ResolvedEndpoints {
  const missing = (
    [
      "DATABASE_URL",
      "STRIPE_SECRET_KEY",
      "STRIPE_WEBHOOK_SECRET",
      "ADMIN_API_TOKEN",
      "EASYPOST_API_KEY",
      "EASYPOST_WEBHOOK_SECRET",
    ] as const
  ).filter((name) => config[name] === undefined);
  if (missing.length > 0) {
    throw new StartupError(
      `${missing.join(", ")}: required by the production entry point, which starts no stand-ins (for development use npm start)`,
    );
  }
  return {
    databaseUrl: config.DATABASE_URL ?? "",
    stripeSecretKey: config.STRIPE_SECRET_KEY ?? "",
    stripeApiBase: config.STRIPE_API_BASE,
    stripeWebhookSecret: config.STRIPE_WEBHOOK_SECRET ?? "",
    adminToken: config.ADMIN_API_TOKEN ?? "",
    ...(config.EASYPOST_API_KEY
      ? {
          easyPost: {
            apiKey: config.EASYPOST_API_KEY,
            ...(config.EASYPOST_API_BASE ? { apiBase: config.EASYPOST_API_BASE } : {}),
          },
        }
      : {}),
    ...(config.EASYPOST_WEBHOOK_SECRET ? { easyPostWebhookSecret: config.EASYPOST_WEBHOOK_SECRET } : {}),
  };
}

export interface RunOptions {
  startDevelopment?: DevelopmentStarter;
  /** Where log lines go instead of stdout's JSON: `npm start` on a terminal prints them readable. */
  logDestination?: DestinationStream;
}

export async function runServer(options: RunOptions = {}): Promise<void> {
  const config = readConfigOrExit();
  const logger = createLogger({
    level: config.LOG_LEVEL,
    ...(options.logDestination ? { destination: options.logDestination } : {}),
  });
  // Human progress lines go to stderr, so stdout stays one JSON log line per line.
  const progress = (line: string) => process.stderr.write(`${line}\n`);

  // Signals are handled from the first moment: a SIGTERM during start-up stops what was started
  // and exits 0, rather than killing the process by default (exit code null) half-way.
  const cleanups: (() => Promise<void>)[] = [];
  const current: { server?: Server } = {};
  installShutdown(logger, () => current.server, cleanups);

  let environment: DevelopmentEnvironment | undefined;
  let endpoints: ResolvedEndpoints;
  if (options.startDevelopment) {
    environment = await options.startDevelopment(config, logger, { progress });
    const started = environment;
    cleanups.push(() => started.stop());
    endpoints = environment.endpoints;
  } else {
    endpoints = configuredEndpoints(config);
    await checkPortFree("PORT", config.PORT, config.HOST);
    await checkDatabaseReachable(endpoints.databaseUrl);
  }

  // PORT=0 (any free port): the port is taken now, before anything builds a link from the
  // configuration (PUBLIC_URL's default, the pay page's return URLs, e-mail links), so that every
  // link names the port the service really listens on. A fixed port is bound once the app is
  // built, as before: nothing answers on it until the service can serve.
  let early: Server | undefined;
  let serving = config;
  if (config.PORT === 0) {
    early = createServer(answerStarting);
    current.server = early;
    await listenOn(early, config);
    serving = Object.freeze({ ...config, PORT: boundPort(early, config.PORT) });
  }

  if (options.startDevelopment) progress("applying database migrations");
  const migration = await migrate(endpoints.databaseUrl);
  if (migration.applied.length > 0) logger.info({ applied: migration.applied }, "migrations applied");

  const services = await createServices({ config: serving, logger, endpoints });
  cleanups.push(() => services.close());
  if (environment?.embeddedDatabase) {
    const added = await seedDemoCatalogIfEmpty(services.db);
    if (added > 0) logger.info({ products: added }, "demo catalog seeded");
  }

  const app = buildApp(services);
  // Before the first delivery can arrive: its pure parts on V8's optimised tiers (no I/O).
  if (services.stripeWebhook) {
    const warming = performance.now();
    const rounds = await services.stripeWebhook.warmUp();
    logger.debug({ rounds, ms: Math.round(performance.now() - warming) }, "Stripe webhook path warmed up");
  }
  let listening: Server;
  if (early) {
    listening = early;
    listening.off("request", answerStarting);
    listening.on("request", app);
  } else {
    listening = createServer(app);
    current.server = listening;
    await listenOn(listening, config);
  }
  const port = boundPort(listening, serving.PORT);
  if (environment) await environment.attachApp(`http://127.0.0.1:${port}`);
  logger.info({ host: config.HOST, port }, "order-fulfillment listening");
  // Said at once rather than left for a probe to find: the Inngest dev server not started yet
  // (INNGEST_DEV), a migration missing. /readyz keeps answering 503 until it is resolved.
  const readiness = await services.readiness();
  if (!readiness.ready) {
    const problems = Object.entries(readiness.checks)
      .filter(([, check]) => !check.ok)
      .map(([name, check]) => `${name}: ${check.detail ?? "failing"}`);
    logger.warn({ checks: readiness.checks }, `listening, but not ready: ${problems.join("; ")}`);
  }
  const appUrl = `http://${config.HOST === "0.0.0.0" ? "127.0.0.1" : config.HOST}:${port}`;
  if (environment?.banner) progress(["", ...environment.banner(appUrl), ""].join("\n"));
}

/** Requests that reach a port taken early (PORT=0) before the app is built: retry shortly. */
function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(503, { "content-type": "application/json", "retry-after": "1" });
  res.end(
    JSON.stringify({ error: { code: "not_ready", message: "The service is starting; retry shortly" } }),
  );
}

async function listenOn(server: Server, config: Config): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new StartupError(
              `PORT=${config.PORT}: port ${config.PORT} on ${config.HOST} is already in use; set PORT to a free port`,
            )
          : error,
      ),
    );
    server.listen(config.PORT, config.HOST);
  });
}

function boundPort(server: Server, fallback: number): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : fallback;
}

function installShutdown(
  logger: Logger,
  server: () => Server | undefined,
  cleanups: (() => Promise<void>)[],
): void {
  let shuttingDown = false;
  const closeResources = async () => {
    for (const cleanup of [...cleanups].reverse()) await cleanup();
  };
  const shutdown = (signal: NodeJS.Signals) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, "shutting down: no new connections, finishing in-flight requests");
    const deadline = setTimeout(() => {
      logger.error("graceful shutdown took too long; exiting");
      process.exit(1);
    }, shutdownDeadlineMs);
    deadline.unref();

    const finish = () => {
      closeResources()
        .then(() => {
          logger.info("shutdown complete");
          // 0, unless the shutdown was asked for because something went wrong (src/dev/supervision.ts).
          process.exit();
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, "error while closing resources");
          process.exit(1);
        });
    };
    const listening = server();
    if (!listening?.listening) {
      finish();
      return;
    }
    listening.close(finish);
    // Keep-alive connections hold server.close() open: those idle now are closed at once; a
    // client that keeps sending on its connection (a proxy's pool, the Stripe stand-in retrying a
    // webhook every few seconds in this very process) is answered with `Connection: close`, and a
    // request in flight now leaves its connection idle when it ends, to be closed on the next round.
    listening.prependListener("request", (_req: IncomingMessage, res: ServerResponse) => {
      res.setHeader("connection", "close");
    });
    listening.closeIdleConnections();
    setInterval(() => listening.closeIdleConnections(), 200).unref();
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

/** Runs the service from an entry point: one-line errors for what a person can fix, exit 1. */
export function main(options: RunOptions = {}): void {
  runServer(options).catch((error: unknown) => {
    if (error instanceof StartupError) {
      process.stderr.write(`order-fulfillment: ${error.message}\n`);
    } else {
      process.stderr.write(
        `order-fulfillment failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
      );
    }
    process.exit(1);
  });
}

if (require.main === module) main();
