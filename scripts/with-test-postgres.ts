// `tsx scripts/with-test-postgres.ts <command> [args...]`: runs the command with TEST_DATABASE_URL
// pointing at one embedded PostgreSQL started for it, then stops that server and removes its files.
// Why: jest's global setup starts a server per jest run when TEST_DATABASE_URL is unset, and
// StrykerJS runs jest once per mutant, so a mutation group paid PostgreSQL's start-up (~15 s on the
// shared machine) for every mutant. With the variable set, the global setup only rebuilds the template.
import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { startScratchPostgres } from "../test/support/test-postgres";

async function main(): Promise<number> {
  const [command, ...args] = process.argv.slice(2);
  if (command === undefined) {
    console.error("usage: tsx scripts/with-test-postgres.ts <command> [args...]");
    return 2;
  }
  const { folder, server } = await startScratchPostgres();
  try {
    const child = spawn(command, args, {
      stdio: "inherit",
      // eslint-disable-next-line no-restricted-properties -- a dev script handing the environment on
      env: { ...process.env, TEST_DATABASE_URL: server.url },
    });
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on("SIGINT", forward);
    process.on("SIGTERM", forward);
    return await new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
  } finally {
    await server.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
