import pino, { type Logger } from "pino";
import { currentLogContext } from "./log-context";
import { redactUrlCredentials } from "./shared/redact-url";
import { skipRedactionWalkForPrimitives } from "./shims/pino-redaction";

export type { Logger };

/** Keys whose values never reach the logs, at the top of a line and up to three levels down. */
const secretKeys = [
  "authorization",
  "cookie",
  "password",
  "secret",
  "token",
  "webhookUrl",
  "smtpUrl",
  "signingKey",
  "eventKey",
  "apiKey",
  // Customers' addresses: ours (`email`, `to`, `recipient`) and Stripe's.
  "email",
  "recipient",
  "to",
  "rejected",
  "customer_email",
  "receipt_email",
];

/** Paths whose values never reach the logs: secrets in headers and bodies, customers' addresses. */
export const redactedPaths = [
  'req.headers["stripe-signature"]',
  'req.headers["x-inngest-signature"]',
  'req.headers["x-hmac-signature"]',
  ...secretKeys.flatMap((key) => [key, `*.${key}`, `*.*.${key}`, `*.*.*.${key}`]),
];

const emailAddress = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;

/**
 * Error messages quote what failed, e.g. a mail server naming the recipient it refused, or a
 * request naming the URL it was for (a customer link's signature in it).
 */
function withoutEmailAddresses(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactUrlCredentials(value.replace(emailAddress, "[email]"));
  if (depth > 4 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => withoutEmailAddresses(item, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, withoutEmailAddresses(item, depth + 1)]),
  );
}

/** A text with the e-mail addresses it quotes masked, for a line that logs an error's message alone. */
export const maskEmailAddresses = (text: string): string => text.replace(emailAddress, "[email]");

// errWithCause: the message as thrown, with each cause nested under `cause`. The default `err`
// serializer appends every cause's message to the message, which repeated a card decline three times.
const errorSerializer = (error: unknown) =>
  withoutEmailAddresses(pino.stdSerializers.errWithCause(error as Error));

const urlSerializer = (value: unknown) => (typeof value === "string" ? redactUrlCredentials(value) : value);

/**
 * Decides, for a line at error level or above, whether it is written as it is: a gate that
 * returns false has the line written at debug instead. One gate per root logger, its children
 * included, installed after creation by whoever learns the reason (src/dev/supervision.ts).
 */
export type ErrorLineGate = (level: number) => boolean;

const errorLevel = 50;
const gates = new WeakMap<Logger, { gate?: ErrorLineGate | undefined }>();

/** Installs (or, with undefined, removes) the gate of a logger made by createLogger. */
export function gateErrorLines(logger: Logger, gate: ErrorLineGate | undefined): void {
  const holder = gates.get(logger);
  if (holder === undefined) throw new Error("gateErrorLines: a logger from createLogger is needed");
  holder.gate = gate;
}

export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  const holder: { gate?: ErrorLineGate | undefined } = {};
  const logger = pino(
    {
      level: options.level,
      hooks: {
        // Consulted for error and fatal lines only, so the usual lines pay one comparison.
        logMethod(args, write, level) {
          if (level >= errorLevel && holder.gate !== undefined && !holder.gate(level)) {
            this.debug(...(args as Parameters<Logger["debug"]>));
            return;
          }
          write.apply(this, args);
        },
      },
      base: { service: "order-fulfillment" },
      redact: { paths: redactedPaths, censor: "[redacted]" },
      // `url` and `location` wherever a line names one: a customer link's signature is redacted.
      serializers: { err: errorSerializer, url: urlSerializer, location: urlSerializer },
      mixin: contextFields,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
  // Same output, without the redactor's path walk for strings and numbers (src/shims).
  skipRedactionWalkForPrimitives(logger);
  gates.set(logger, holder);
  return logger;
}

/**
 * Adds the current order id and run id (see src/log-context.ts) to a line, unless the line or its
 * logger's bindings already carry them: a key bound twice would appear twice in the JSON.
 */
function contextFields(mergeObject: object, _level: number, logger: Logger): object {
  const context = currentLogContext();
  if (!context) return {};
  const bound = logger.bindings();
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(context)) {
    if (value !== undefined && !(key in mergeObject) && !(key in bound)) fields[key] = value;
  }
  return fields;
}
