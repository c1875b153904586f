import pino, { type Logger } from "pino";

export type { Logger };

/** Paths whose values never reach the logs: secrets in headers and bodies, customers' addresses. */
export const redactedPaths = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["stripe-signature"]',
  'req.headers["x-inngest-signature"]',
  'req.headers["x-carrier-signature"]',
  "email",
  "*.email",
  "recipient",
  "*.recipient",
  "to",
  "*.to",
];

export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      level: options.level,
      base: { service: "order-fulfillment" },
      redact: { paths: redactedPaths, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
}
