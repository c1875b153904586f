import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "pg";
import { startEmbeddedPostgres } from "../src/dev/embedded-postgres";
import { createLocalEngine } from "../src/dev/inngest-engine";
import { createLogger } from "../src/logger";

/**
 * Proves without Docker that every app service of docker-compose.yml starts: reads `docker-compose
 * --profile selfhost config` (as JSON) on stdin and, for each service built from this repository,
 * runs what its container runs, the entry point's migrations then the service's `command`, with the
 * service's environment as compose resolved it, until GET /readyz answers 200; then stops it.
 *
 * What differs from a container, and why:
 * - DATABASE_URL names the compose `postgres` service: the same database name on a scratch embedded
 *   PostgreSQL here (no Docker network, no server of this machine);
 * - PORT, HOST and the stand-ins' ports are 0 / loopback: a container has its own ports, this
 *   machine is shared, so fixed ports would collide;
 * - DATA_DIR is a temporary folder;
 * - INNGEST_DEV names the compose `inngest` service (the Inngest dev server, whose CLI cannot be
 *   fetched here): the local engine on loopback stands in for it, as it does in `npm start`, and
 *   /readyz checks that it answers. Everything else is exactly the compose environment.
 *
 * docker-compose --profile selfhost config | python3 -c '<yaml to json>' | npx tsx scripts/check-compose-start.ts
 */

interface ComposeService {
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | null>;
}

const root = path.resolve(__dirname, "..");
const startTimeoutMs = 180_000;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The container's command as a process here: `node` is this Node, paths are the checkout's. */
function commandOf(service: ComposeService): string[] {
  const command = service.command;
  if (command === undefined)
    throw new Error("no command: the image's CMD is dist/server.js, which has no stand-ins");
  return typeof command === "string" ? command.split(/\s+/).filter(Boolean) : command;
}

function run(argv: string[], env: Record<string, string>): ChildProcess {
  const [program, ...args] = argv;
  if (program === undefined) throw new Error("empty command");
  return spawn(program === "node" ? process.execPath : program, args, {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
}

async function startService(name: string, argv: string[], env: Record<string, string>): Promise<void> {
  // The entry point first (scripts/docker-entrypoint.sh): migrations, when DATABASE_URL is set.
  const migrate = run(["node", "--import", "tsx", "src/cli/db-migrate.ts"], env);
  let migrateLog = "";
  migrate.stdout?.on("data", (chunk: Buffer) => (migrateLog += chunk.toString()));
  migrate.stderr?.on("data", (chunk: Buffer) => (migrateLog += chunk.toString()));
  const migrated = await exitOf(migrate);
  if (migrated !== 0) throw new Error(`${name}: migrations exited with ${migrated}:\n${migrateLog}`);

  const child = run(argv, env);
  let log = "";
  child.stdout?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
  try {
    const deadline = Date.now() + startTimeoutMs;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name}: exited with ${child.exitCode}:\n${log}`);
      if (Date.now() > deadline) throw new Error(`${name}: /readyz did not answer 200 in time:\n${log}`);
      const port = /"port":(\d+),"msg":"order-fulfillment listening"/.exec(log)?.[1];
      if (port) {
        const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (res) => res.status,
          () => 0,
        );
        if (status === 200) {
          console.log(`${name}: \`${argv.join(" ")}\` started; /readyz answered 200`);
          return;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    if (child.exitCode === null) {
      child.kill("SIGTERM");
      await exitOf(child);
    }
  }
}

async function main(): Promise<void> {
  const compose = JSON.parse(await readStdin()) as { services?: Record<string, ComposeService> };
  const appServices = Object.entries(compose.services ?? {}).filter(
    ([, service]) => service.build !== undefined,
  );
  if (appServices.length === 0) throw new Error("no service is built from this repository");

  const folder = await mkdtemp(path.join(tmpdir(), "check-compose-start-"));
  const postgres = await startEmbeddedPostgres({
    dir: path.join(folder, "postgres"),
    password: randomBytes(12).toString("hex"),
    logger: createLogger({ level: "warn" }),
    ephemeral: true,
  });
  // The dev server's stand-in (no signing key: the dev server signs nothing).
  const devServer = createLocalEngine({
    databaseUrl: postgres.url,
    schema: "check_compose_dev_server",
    logger: createLogger({ level: "warn" }),
  });
  const { url: devServerUrl } = await devServer.listen(0, "127.0.0.1");
  try {
    for (const [name, service] of appServices) {
      const env: Record<string, string> = {};
      for (const [key, value] of Object.entries(service.environment ?? {}))
        if (value !== null && value !== "") env[key] = String(value);
      if (env.DATABASE_URL !== undefined) {
        const database = new URL(env.DATABASE_URL).pathname.slice(1) || "postgres";
        const admin = new Client({ connectionString: postgres.url });
        await admin.connect();
        try {
          const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
          if (exists.rowCount === 0) await admin.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
        } finally {
          await admin.end();
        }
        const local = new URL(postgres.url);
        local.pathname = `/${database}`;
        env.DATABASE_URL = local.toString();
      }
      Object.assign(env, {
        PATH: process.env.PATH ?? "/usr/bin:/bin", // eslint-disable-line no-restricted-properties -- the child needs PATH
        PORT: "0",
        HOST: "127.0.0.1",
        STRIPE_SANDBOX_PORT: "0",
        EASYPOST_SANDBOX_PORT: "0",
        LOCAL_ENGINE_PORT: "0",
        DATA_DIR: path.join(folder, `data-${name}`),
      });
      if (env.INNGEST_DEV !== undefined) env.INNGEST_DEV = devServerUrl;
      await startService(name, commandOf(service), env);
    }
  } finally {
    await devServer.close();
    await postgres.stop();
    await rm(folder, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
