import pino, { type Logger } from "pino";
import { currentLogContext } from "./log-context";
import { redactUrlCredentials } from "./shared/redact-url";

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
  'req.headers["x-carrier-signature"]',
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

export function createLogger(options: { level: string; destination?: pino.DestinationStream }): Logger {
  const logger = pino(
    {
      level: options.level,
      base: { service: "order-fulfillment" },
      redact: { paths: redactedPaths, censor: "[redacted]" },
      // `url` and `location` wherever a line names one: a customer link's signature is redacted.
      serializers: { err: errorSerializer, url: urlSerializer, location: urlSerializer },
      mixin: contextFields,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination,
  );
  skipRedactionWalkForPrimitives(logger);
  return logger;
}

type Stringifier = (value: unknown, ...rest: unknown[]) => string;

/**
 * With a path starting with `*` (all of ours but three), pino hands every value of every line,
 * ids and the message included, to the @pinojs/redact instance for those paths, and that instance
 * parses all 48 of them again on each call, only to find that a string has no keys: about 35 µs a
 * line, most of the CPU a webhook delivery spends on its two info lines
 * (docs/decisions/0010-cheaper-logging-on-hot-paths.md). A string,
 * number, boolean or null cannot hold a key, so for them the result is known without the walk: the
 * JSON of the value, which is what the redactor returns for them too (it serializes with
 * JSON.stringify, through pino's stringify). Objects and arrays still go through it, unchanged.
 *
 * pino has no option for this; `pino.symbols` is its documented way to adjust a logger's state
 * "for performant integration". Children inherit the stringifiers from their parent, so this
 * covers every child logger, those created before the call included. If a pino release stores
 * them differently, nothing is replaced (returns false): redaction stays as pino does it, only
 * slower, and test/ops/log-redaction-primitives.test.ts fails on the returned value.
 */
export function skipRedactionWalkForPrimitives(logger: Logger): boolean {
  const { stringifiersSym, wildcardFirstSym } = pino.symbols;
  const state = logger as unknown as Record<symbol, Record<string | symbol, Stringifier> | undefined>;
  const stringifiers = state[stringifiersSym];
  const walk = stringifiers?.[wildcardFirstSym];
  if (!stringifiers || typeof walk !== "function") return false;
  // Prototype-less like pino's own: a key such as `constructor` must not find a stringifier.
  const replaced = Object.assign(Object.create(null), stringifiers) as Record<string | symbol, Stringifier>;
  replaced[wildcardFirstSym] = (value, ...rest) =>
    typeof value === "string" || typeof value === "number" || typeof value === "boolean" || value === null
      ? JSON.stringify(value)
      : walk(value, ...rest);
  state[stringifiersSym] = replaced;
  return true;
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
