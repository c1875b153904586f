import pino, { type Logger } from "pino";
import { isShimOn } from "./switches";

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
  if (!isShimOn("pino-redaction-primitives")) return false;
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
