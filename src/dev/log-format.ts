import type { DestinationStream } from "pino";
import pretty from "pino-pretty";

/**
 * `npm start` on a terminal: one readable line per log line (time, level, message, then the
 * fields), through pino-pretty; piped to a file or a collector, the JSON lines as in production.
 * Redaction and serializers run before this, in the logger itself.
 */
export function terminalLogDestination(stdout: { isTTY?: boolean }): DestinationStream | undefined {
  if (stdout.isTTY !== true) return undefined;
  return pretty({
    colorize: true,
    // Synchronous, so the last lines before an exit are printed.
    sync: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,service",
    singleLine: true,
  });
}
