import { compileExpression, ExpressionError } from "../../../src/dev/inngest-engine/expressions";
import { parseCron } from "../../../src/dev/inngest-engine/cron";
import { parseDurationMs } from "../../../src/shared/duration";

describe("local engine expressions (CEL subset)", () => {
  const event = {
    name: "shop/order.placed",
    data: { orderId: "o-1", total: 120, express: true, nested: { tier: "gold" } },
  };
  const incoming = { name: "shop/order.paid", data: { orderId: "o-1", total: 99 } };

  test.each([
    ["event.data.orderId == 'o-1'", true],
    ['event.data.orderId == "o-2"', false],
    ["event.data.orderId == async.data.orderId", true],
    ["event.data.total != async.data.total", true],
    ["event.data.total > 100 && event.data.express", true],
    ["event.data.total <= 100 || event.data.nested.tier == 'gold'", true],
    ["!(event.data.express == true)", false],
    ["event.data.missing == 'x'", false],
    ["event.data.missing == 'x' || event.data.express", true],
    ["event.data.missing == 'x' && false", false],
    ["event.data.total == 120.0", true],
    ["event.name == 'shop/order.placed' && (async.data.total < 100)", true],
  ])("%s -> %s", (source, expected) => {
    expect(compileExpression(source).matches({ event, async: incoming })).toBe(expected);
  });

  test("keys evaluate to strings", () => {
    expect(compileExpression("event.data.orderId").key({ event })).toBe("o-1");
    expect(compileExpression("event.data.total").key({ event })).toBe("120");
    expect(compileExpression("event.data.absent").key({ event })).toBeUndefined();
  });

  test.each([
    "size(event.data.items) > 0",
    "event.data.name.startsWith('a')",
    "event.data.items[0] == 1",
    "event.data.total + 1 == 2",
    "'a' in event.data",
    "user.id == 1",
    "event.data.x == ",
    "event.data.x == 'unterminated",
    "1 < 2 < 3",
  ])("refuses %s", (source) => {
    expect(() => compileExpression(source)).toThrow(ExpressionError);
    expect(() => compileExpression(source)).toThrow(`Unsupported expression "${source}"`);
  });
});

describe("local engine cron", () => {
  const at = (iso: string): number => Date.parse(iso);

  test.each([
    ["0 * * * *", "2025-01-01T10:15:00Z", "2025-01-01T11:00:00Z"],
    ["*/15 * * * *", "2025-01-01T10:15:00Z", "2025-01-01T10:30:00Z"],
    ["30 9 * * 1-5", "2025-01-03T10:00:00Z", "2025-01-06T09:30:00Z"],
    ["0 0 1 * *", "2025-01-31T12:00:00Z", "2025-02-01T00:00:00Z"],
    ["0 12 * * SUN", "2025-01-01T00:00:00Z", "2025-01-05T12:00:00Z"],
    ["0 0 29 2 *", "2025-01-01T00:00:00Z", "2028-02-29T00:00:00Z"],
    ["@daily", "2025-01-01T00:00:00Z", "2025-01-02T00:00:00Z"],
    ["TZ=UTC 5 4 * * *", "2025-01-01T05:00:00Z", "2025-01-02T04:05:00Z"],
  ])("%s after %s is %s", (cron, after, next) => {
    expect(new Date(parseCron(cron).nextAfter(at(after))).toISOString()).toBe(
      new Date(at(next)).toISOString(),
    );
  });

  test.each(["* * * *", "61 * * * *", "TZ=Europe/Paris 0 9 * * *", "0 0 5-1 * *"])("refuses %s", (cron) => {
    expect(() => parseCron(cron)).toThrow(/Unsupported cron/);
  });

  test("durations as the SDK writes them", () => {
    expect(parseDurationMs("1w2d3h4m5s")).toBe(((7 + 2) * 24 + 3) * 3_600_000 + 4 * 60_000 + 5_000);
    expect(parseDurationMs("")).toBe(0);
    expect(parseDurationMs("500ms")).toBe(500);
    expect(parseDurationMs("2025-01-01T00:00:00Z")).toBeUndefined();
  });
});
