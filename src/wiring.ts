import type { AppDependencies } from "./app";
import type { Config } from "./config";
import { createDatabase, type Database } from "./db/client";
import { createDatabaseReadiness } from "./health/readiness";
import type { Logger } from "./logger";

/**
 * Builds every adapter and service from the configuration with plain factory functions.
 * The result is what buildApp() takes, plus what the process must close on shutdown.
 */
export interface Services extends AppDependencies {
  db: Database;
  close(): Promise<void>;
}

export async function createServices(options: {
  config: Config;
  logger: Logger;
  databaseUrl: string;
}): Promise<Services> {
  const { logger, databaseUrl } = options;
  const db = createDatabase(databaseUrl);
  const readiness = await createDatabaseReadiness(db);
  return {
    logger,
    db,
    readiness,
    async close() {
      await db.$disconnect();
    },
  };
}
