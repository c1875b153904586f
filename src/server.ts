import type { Server } from "node:http";
import { buildApp } from "./app";
import { ConfigError, loadConfig, type Config } from "./config";
import { migrate } from "./db/migrator";
import { seedDemoCatalogIfEmpty } from "./db/seed";
import { startStandIns } from "./dev/stand-ins";
import { createLogger, type Logger } from "./logger";
import { createServices } from "./wiring";

/** Owns the process: configuration, stand-ins, listening, signals and graceful shutdown. */

const shutdownDeadlineMs = 10_000;

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

async function main(): Promise<void> {
  const config = readConfigOrExit();
  const logger = createLogger({ level: config.LOG_LEVEL });

  const standIns = await startStandIns(config, logger);
  const { endpoints } = standIns;
  const migration = await migrate(endpoints.databaseUrl);
  if (migration.applied.length > 0) logger.info({ applied: migration.applied }, "migrations applied");

  const services = await createServices({ config, logger, endpoints });
  if (standIns.embeddedDatabase) {
    const added = await seedDemoCatalogIfEmpty(services.db);
    if (added > 0) logger.info({ products: added }, "demo catalog seeded");
  }

  const app = buildApp(services);
  const server = app.listen(config.PORT, config.HOST);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : config.PORT;
  logger.info({ port }, "order-fulfillment listening");
  await standIns.attachApp(`http://127.0.0.1:${port}`);

  installShutdown(server, logger, async () => {
    await services.close();
    await standIns.stop();
  });
}

function installShutdown(server: Server, logger: Logger, closeResources: () => Promise<void>): void {
  let shuttingDown = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, "shutting down: no new connections, finishing in-flight requests");
    const deadline = setTimeout(() => {
      logger.error("graceful shutdown took too long; exiting");
      process.exit(1);
    }, shutdownDeadlineMs);
    deadline.unref();

    server.close(() => {
      closeResources()
        .then(() => {
          logger.info("shutdown complete");
          process.exit(0);
        })
        .catch((error: unknown) => {
          logger.error({ err: error }, "error while closing resources");
          process.exit(1);
        });
    });
    // Keep-alive connections with no request in flight would hold server.close() open.
    server.closeIdleConnections();
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `order-fulfillment failed to start: ${error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
