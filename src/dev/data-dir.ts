import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { readFile, writeFile, chmod } from "node:fs/promises";
import path from "node:path";

/**
 * The development data folder (DATA_DIR): owned by one running service at a time, readable by
 * this user only (0700, files 0600), holding the embedded cluster, the stand-ins' state, the e-mail
 * outbox and the development secrets.
 */

export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(
      `DATA_DIR ${dir} is in use by another running service (pid ${pid}); stop it, or set DATA_DIR to another folder`,
    );
    this.name = "DataDirInUseError";
  }
}

export interface DataDirLock {
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Creates the folder if needed and takes every permission from others (0700). Run as root, the
 * embedded PostgreSQL's user keeps the group's search bit (0710) it needs to reach its cluster.
 */
export function prepareDataDir(dir: string): string {
  const absolute = path.resolve(dir);
  mkdirSync(absolute, { recursive: true, mode: 0o700 });
  const mode = statSync(absolute).mode & 0o777;
  if ((mode & 0o067) !== 0) chmodSync(absolute, mode & 0o710);
  return absolute;
}

/**
 * Takes DATA_DIR for this process: `DATA_DIR/service.pid`, created exclusively, holds our pid.
 * A file naming a live process means the folder is in use (DataDirInUseError); one naming a dead
 * process (a service killed with SIGKILL) is stale and taken over. Synchronous and done before any
 * port or database is opened.
 */
export function lockDataDir(dir: string): DataDirLock {
  const file = path.join(dir, "service.pid");
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return {
        release() {
          try {
            if (readFileSync(file, "utf8").trim() === String(process.pid)) unlinkSync(file);
          } catch {
            // Already gone: nothing to release.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    let holder = Number.NaN;
    try {
      holder = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
    } catch {
      continue; // Released between our attempt and the read: try again.
    }
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
      throw new DataDirInUseError(dir, holder);
    }
    // Stale (its process is gone, or the file is unreadable garbage): take it over.
    try {
      unlinkSync(file);
    } catch {
      // Someone else removed it first; the next attempt settles who holds the folder.
    }
  }
  throw new Error(`could not lock DATA_DIR ${dir} (${file} keeps changing)`);
}

/** Secrets the development stand-ins need, generated once per data folder and reused. */
export interface DevSecrets {
  ADMIN_API_TOKEN: string;
  STRIPE_WEBHOOK_SECRET: string;
  /** Signs the EasyPost stand-in's tracker events (X-Hmac-Signature). */
  EASYPOST_WEBHOOK_SECRET: string;
  /** Signs the local engine's calls to serve(), which checks them as in production. */
  INNGEST_SIGNING_KEY: string;
  /** Password of the embedded PostgreSQL's `postgres` role. */
  EMBEDDED_POSTGRES_PASSWORD: string;
}

const generators: { [K in keyof DevSecrets]: () => string } = {
  ADMIN_API_TOKEN: () => randomBytes(24).toString("base64url"),
  STRIPE_WEBHOOK_SECRET: () => `whsec_${randomBytes(24).toString("base64url")}`,
  EASYPOST_WEBHOOK_SECRET: () => randomBytes(24).toString("base64url"),
  INNGEST_SIGNING_KEY: () => `signkey-dev-${randomBytes(32).toString("hex")}`,
  EMBEDDED_POSTGRES_PASSWORD: () => randomBytes(18).toString("base64url"),
};

export function devSecretsFile(dir: string): string {
  return path.join(dir, "dev-secrets.json");
}

/**
 * Reads DATA_DIR/dev-secrets.json, adds any secret it lacks, and writes it back (0600) only when
 * something was added: the admin token a developer saved keeps working across restarts.
 */
export async function loadDevSecrets(dir: string): Promise<{ secrets: DevSecrets; created: string[] }> {
  const file = devSecretsFile(dir);
  let stored: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(await readFile(file, "utf8"));
    if (parsed !== null && typeof parsed === "object") stored = parsed as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new Error(`${file} is unreadable (${(error as Error).message}); fix or delete it`);
    }
  }
  const created: string[] = [];
  const secrets = {} as Record<keyof DevSecrets, string>;
  for (const key of Object.keys(generators) as (keyof DevSecrets)[]) {
    const value = stored[key];
    if (typeof value === "string" && value !== "") {
      secrets[key] = value;
    } else {
      secrets[key] = generators[key]();
      created.push(key);
    }
  }
  if (created.length > 0) {
    await writeFile(file, `${JSON.stringify({ ...stored, ...secrets }, null, 2)}\n`, { mode: 0o600 });
  }
  await chmod(file, 0o600);
  return { secrets, created };
}
