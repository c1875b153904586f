import { existsSync } from "node:fs";
import { gateErrorLines, type Logger } from "../logger";

/** How often the watches look; a second is quick for a person and nothing for the CPU. */
const everyMs = 1_000;

/**
 * Stops the service the way SIGTERM does (the graceful path in src/server.ts, which stops the
 * embedded PostgreSQL last), exiting with `exitCode`.
 */
export function stopService(exitCode: number): void {
  process.exitCode = exitCode;
  process.kill(process.pid, "SIGTERM");
}

/**
 * `npm start` under a supervisor: killing npm's pid kills npm alone (it does not pass on a signal
 * it dies of), and the service, reparented, went on running with its PostgreSQL. The service
 * notices its parent is gone (it was reparented) and stops. Development only: a production
 * process started in the background on purpose (`nohup node dist/server.js &`) outlives its shell.
 */
export function exitWhenParentGoes(logger: Logger): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    logger.warn({ parent }, "the process that started the service is gone (npm was stopped): stopping");
    stopService(0);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * DATA_DIR holds the embedded cluster and the lock: deleted under a running service, every query
 * fails from then on. Said once, in words, and the service stops; a new start makes a fresh folder.
 * The watch looks once a second, and a query may fail sooner (the engine's scheduler claims jobs
 * every few hundred ms): an error line written while the folder is gone says so first, and is
 * itself kept to debug, since it only follows from the deletion.
 */
export function exitWhenDataDirGoes(
  lockFile: string,
  dataDir: string,
  logger: Logger,
  options: { stop?: (exitCode: number) => void } = {},
): () => void {
  const stop = options.stop ?? stopService;
  let said = false;
  let saying = false;
  const sayGoneOnce = () => {
    if (said) return;
    said = true;
    clearInterval(timer);
    saying = true;
    try {
      logger.fatal(
        { dataDir },
        `DATA_DIR ${dataDir} was deleted while the service was running: stopping. Start again to create a fresh one (the embedded database, outbox and dev secrets were in it)`,
      );
    } finally {
      saying = false;
    }
    stop(1);
  };
  const timer = setInterval(() => {
    if (!existsSync(lockFile)) sayGoneOnce();
  }, everyMs);
  timer.unref();
  gateErrorLines(logger, () => {
    if (saying) return true;
    if (!said && existsSync(lockFile)) return true;
    sayGoneOnce();
    return false;
  });
  return () => {
    clearInterval(timer);
    gateErrorLines(logger, undefined);
  };
}
