import { ConfigError, loadConfig } from "../src/config";
import { createDatabase } from "../src/db/client";
import { seedDemoCatalogIfEmpty } from "../src/db/seed";

/** `npm run db:seed`: adds the demo catalog to DATABASE_URL when its catalog is empty. */
async function main(): Promise<void> {
  const config = loadConfig();
  if (config.DATABASE_URL === undefined) {
    throw new ConfigError([
      "DATABASE_URL: required for db:seed (npm start seeds the embedded database by itself)",
    ]);
  }
  const db = createDatabase(config.DATABASE_URL);
  try {
    const added = await seedDemoCatalogIfEmpty(db);
    process.stdout.write(added > 0 ? `seeded ${added} products\n` : "catalog not empty; nothing seeded\n");
  } finally {
    await db.$disconnect();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`db:seed failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
