import pino from "pino";
import { createLogger, redactedPaths } from "../../src/logger";
import { skipRedactionWalkForPrimitives } from "../../src/shims/pino-redaction";

/**
 * src/logger.ts answers pino's redaction for strings, numbers, booleans and null without walking the
 * redaction paths. These lines must come out exactly as pino's own redaction writes them, byte for byte,
 * whatever the line holds.
 */
function loggerWritingTo(lines: string[], shortcut: boolean): pino.Logger {
  const logger = pino(
    {
      level: "trace",
      base: { service: "order-fulfillment" },
      redact: { paths: redactedPaths, censor: "[redacted]" },
      // A fixed time: the two loggers' lines are compared as text.
      timestamp: () => ',"time":"fixed"',
    },
    { write: (line: string) => void lines.push(line) },
  );
  if (shortcut) expect(skipRedactionWalkForPrimitives(logger)).toBe(true);
  return logger;
}

const secret = "s3cr3t-value";
const address = "buyer@example.com";
const circular: Record<string, unknown> = { name: "loop", token: secret };
circular.self = circular;

const lines: [unknown, ...unknown[]][] = [
  // What a webhook delivery logs: only strings.
  [{ orderId: "0b9f7a0e", eventId: "evt_1", type: "checkout.session.completed", status: "placed" }, "moved"],
  [{ reason: 'quote " backslash \\ newline \n tab \t nul \u0000 é ☃ 😀 lone \ud800' }, "rejected"],
  [
    {
      long: "x".repeat(150),
      count: 3,
      ratio: 0.1,
      big: 1e21,
      nan: Number.NaN,
      inf: Infinity,
      yes: true,
      none: null,
    },
  ],
  // Keys named like Object.prototype's members: pino's stringifiers have no prototype.
  [{ constructor: "c", toString: 1, hasOwnProperty: { email: address } }, "prototype names"],
  [{ undef: undefined, fn: () => 1, date: new Date(0), bigint: 10n }, "odd values"],
  // Secret keys at the top, holding primitives, objects and arrays.
  [{ token: secret, password: 42, email: address, to: [address], secret: { nested: secret }, cookie: null }],
  // Secret keys at every depth the paths cover, and one level deeper (not covered, as before).
  [{ a: { email: address, b: { token: secret, c: { password: secret, d: { secret } } } } }, "depths"],
  [{ list: [{ email: address }, [{ token: secret }], "plain", 1] }, "arrays"],
  [{ req: { headers: { "stripe-signature": secret, "x-inngest-signature": secret, host: "h" } } }, "headers"],
  [{ err: Object.assign(new Error(`refused <${address}>`), { rejected: [address] }) }, "error"],
  [{ circular }, "circular"],
  // The message and interpolated values.
  ["plain message"],
  ["interpolated %s %d %j %o", "text", 7, { token: secret, ok: 1 }, { a: { email: address } }],
  [{ key: "v" }, "interpolated %j", { password: secret }],
  [42],
  [null],
];

describe("redaction of primitives without the path walk", () => {
  it.each(lines.map((args, index) => [index, args] as const))(
    "line %i is written as pino writes it",
    (_i, args) => {
      const expected: string[] = [];
      const actual: string[] = [];
      const log = (logger: pino.Logger) => (logger.info as (...a: unknown[]) => void)(...args);
      log(loggerWritingTo(expected, false));
      log(loggerWritingTo(actual, true));
      expect(actual).toEqual(expected);
    },
  );

  it("applies to child loggers, created before or after, and to their bindings", () => {
    const expected: string[] = [];
    const actual: string[] = [];
    for (const [out, shortcut] of [
      [expected, false],
      [actual, true],
    ] as const) {
      const root = pino(
        { base: null, redact: { paths: redactedPaths, censor: "[redacted]" }, timestamp: false },
        { write: (line: string) => void out.push(line) },
      );
      const before = root.child({ component: "before", token: secret, user: { email: address } });
      if (shortcut) expect(skipRedactionWalkForPrimitives(root)).toBe(true);
      const after = root.child({ component: "after", meta: { apiKey: secret }, n: 1 });
      before.info({ orderId: "o1" }, "from the child made before");
      after.child({ deeper: { signingKey: secret } }).info({ to: address }, "from a grandchild");
    }
    expect(actual).toEqual(expected);
    expect(actual.join("")).not.toContain(secret);
    expect(actual.join("")).not.toContain(address);
  });

  it("keeps the service logger's guarantee: secrets at any covered depth never reach a line", () => {
    const out: string[] = [];
    const logger = createLogger({
      level: "info",
      destination: { write: (line: string) => void out.push(line) },
    });
    logger
      .child({ component: "test" })
      .info(
        { token: secret, order: { customer: { email: address, name: "Ann" } }, id: "kept" },
        "a line with secrets",
      );
    const [line] = out.map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(line).toMatchObject({
      token: "[redacted]",
      order: { customer: { email: "[redacted]", name: "Ann" } },
      id: "kept",
      component: "test",
    });
    expect(out.join("")).not.toContain(secret);
    expect(out.join("")).not.toContain(address);
  });
});
