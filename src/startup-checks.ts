import net from "node:net";
import { Client } from "pg";

/**
 * Checks run at start, before slow work (migrations, an embedded database's first initdb), so a
 * person gets one line naming the variable to change instead of a stack trace a minute later.
 */

/** A start-up problem a person can fix; printed as one line, exit code 1. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** A port the service is about to listen on, and the variable that chose it. */
export interface PortToCheck {
  variable: string;
  port: number;
  host: string;
}

/** Why `host:port` cannot be bound, or undefined when it can (port 0 is skipped: any port will do). */
async function portProblem({ variable, port, host }: PortToCheck): Promise<string | undefined> {
  if (port === 0) return undefined;
  return new Promise<string | undefined>((resolve) => {
    const probe = net.createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === "EADDRINUSE"
          ? "is already in use"
          : error.code === "EACCES"
            ? "needs privileges to bind"
            : `cannot be bound (${error.code ?? error.message})`;
      resolve(`${variable}=${port}: port ${port} on ${host} ${reason}; set ${variable} to a free port`);
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * Fails with one StartupError naming every port that cannot be bound, so that a person whose
 * 3000 and 12111 are both taken changes both variables at once instead of one per restart.
 */
export async function checkPortsFree(ports: readonly PortToCheck[]): Promise<void> {
  const problems = (await Promise.all(ports.map(portProblem))).filter(
    (problem): problem is string => problem !== undefined,
  );
  if (problems.length === 1) throw new StartupError(problems[0] as string);
  if (problems.length > 1) {
    throw new StartupError(
      `${problems.length} ports cannot be used:\n${problems.map((line) => `  ${line}`).join("\n")}`,
    );
  }
}

/** Fails with a StartupError naming `variable` when `host:port` cannot be bound (port 0 is skipped). */
export async function checkPortFree(variable: string, port: number, host: string): Promise<void> {
  await checkPortsFree([{ variable, port, host }]);
}

/** Fails with a StartupError naming DATABASE_URL when PostgreSQL there cannot be reached or refuses us. */
export async function checkDatabaseReachable(url: string, timeoutMs = 5_000): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A server that drops us after connecting surfaces as an 'error' event; connect() rejects anyway.
  client.on("error", () => undefined);
  let where = "the configured server";
  try {
    const parsed = new URL(url);
    where = `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    // config.ts validated the scheme; an unparsable rest keeps the generic wording.
  }
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    const detail = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new StartupError(`DATABASE_URL: cannot use PostgreSQL at ${where} (${detail}); check DATABASE_URL`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
