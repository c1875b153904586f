import { createLogger, type Logger } from "../../src/logger";

export interface CapturedLog {
  logger: Logger;
  /** Every line written so far, raw (what would reach stdout). */
  text(): string;
  /** Every line written so far, parsed. */
  lines(): Record<string, unknown>[];
}

/** A real service logger (redaction and all) whose output is kept in memory instead of printed. */
export function captureLog(level = "trace"): CapturedLog {
  const chunks: string[] = [];
  const logger = createLogger({ level, destination: { write: (chunk: string) => void chunks.push(chunk) } });
  return {
    logger,
    text: () => chunks.join(""),
    lines: () =>
      chunks
        .join("")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
