import type { Config } from "../config";
import type { Logger } from "../logger";
import { startEmbeddedPostgres } from "./embedded-postgres";

/**
 * Starts the embedded stand-ins for whatever the configuration leaves unset, so that
 * `npm start` works offline with no configuration. Production never gets here with a gap:
 * config validation requires every real endpoint there, and this function refuses anyway.
 */
export interface StandIns {
  databaseUrl: string;
  embeddedDatabase: boolean;
  stop(): Promise<void>;
}

export async function startStandIns(config: Config, logger: Logger): Promise<StandIns> {
  if (config.isProduction && config.useEmbeddedDatabase) {
    throw new Error("Refusing to start embedded stand-ins with NODE_ENV=production");
  }
  const stops: (() => Promise<void>)[] = [];
  let databaseUrl = config.DATABASE_URL;
  if (databaseUrl === undefined) {
    const embedded = await startEmbeddedPostgres({ dataDir: config.DATA_DIR, logger });
    stops.push(embedded.stop);
    databaseUrl = embedded.url;
  }
  return {
    databaseUrl,
    embeddedDatabase: config.useEmbeddedDatabase,
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
