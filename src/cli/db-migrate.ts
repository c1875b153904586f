import { ConfigError, loadConfig } from "../config";
import { migrate, MigrationError } from "../db/migrator";

/**
 * Applies prisma/migrations to DATABASE_URL without Prisma's engine: `npm run db:migrate` in
 * development, `node dist/cli/db-migrate.js` in the container before the server starts.
 * It lives under src/ so that the production build compiles it.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (config.DATABASE_URL === undefined) {
    throw new ConfigError([
      "DATABASE_URL: required for db:migrate (npm start migrates the embedded database by itself)",
    ]);
  }
  const result = await migrate(config.DATABASE_URL);
  for (const name of result.applied) process.stdout.write(`applied  ${name}\n`);
  process.stdout.write(
    `${result.applied.length} migration(s) applied, ${result.alreadyApplied.length} already up to date\n`,
  );
}

main().catch((error: unknown) => {
  const known = error instanceof ConfigError || error instanceof MigrationError;
  process.stderr.write(`db:migrate failed: ${known ? error.message : String(error)}\n`);
  process.exit(1);
});
