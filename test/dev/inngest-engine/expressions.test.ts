import { compileExpression, ExpressionError } from "../../../src/dev/inngest-engine/expressions";
import { parseCron } from "../../../src/dev/inngest-engine/cron";
import { parseDurationMs } from "../../../src/shared/duration";

describe("local engine expressions (CEL, @bufbuild/cel)", () => {
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

  // Expressions of the kinds Inngest's docs show for `if`, `match`, `cancelOn` and `waitForEvent`,
  // evaluated as real CEL by @bufbuild/cel, as cel-go would.
  const order = {
    name: "app/order.created",
    data: {
      userId: "u-1",
      billing_plan: "enterprise",
      amount: 1500,
      email: "Ann@Example.com",
      roles: ["admin", "buyer"],
      items: [
        { sku: "a", price: 20 },
        { sku: "b", price: 120 },
      ],
      coupon: null,
      user: { id: "u-1", tier: "gold" },
    },
  };
  const reply = { name: "app/invoice.paid", data: { userId: "u-1", billing_plan: "pro", amount: 1500 } };
  test.each([
    ["event.data.billing_plan == 'enterprise'", true],
    ["event.data.amount > 1000", true],
    ["event.data.amount >= 1000 && event.data.amount < 2000", true],
    ["event.data.userId == async.data.userId", true],
    ["event.data.user.id == async.data.userId && async.data.billing_plan == 'pro'", true],
    ["async.data.amount == event.data.amount", true],
    ["'admin' in event.data.roles", true],
    ["'owner' in event.data.roles", false],
    ["size(event.data.items) > 1", true],
    ["event.data.items.size() == 2", true],
    ["event.data.items.exists(i, i.price > 100)", true],
    ["event.data.items.all(i, i.price > 100)", false],
    ["event.data.items[0].sku == 'a'", true],
    ["event.data.email.endsWith('@Example.com')", true],
    ["event.data.email.lowerAscii().endsWith('@example.com')", true],
    ["event.data.email.startsWith('Ann')", true],
    ["event.data.email.contains('@')", true],
    ["event.data.email.matches('^[A-Za-z]+@')", true],
    ["has(event.data.user.tier)", true],
    ["has(event.data.discount)", false],
    ["event.data.coupon == null", true],
    ["event.name.startsWith('app/order.')", true],
    // JSON numbers are doubles and CEL has no mixed int/double arithmetic (cel-go errors too).
    ["event.data.amount + 500 == 2000", false],
    ["event.data.amount + 500.0 == 2000.0", true],
    ["event.data.user.tier in ['gold', 'platinum']", true],
    ["event.data.billing_plan == 'pro' ? false : true", true],
    // A missing field is an error, and an error does not match (unless || / && absorb it).
    ["event.data.discount > 0", false],
    ["event.data.discount > 0 || event.data.amount > 0", true],
    ["async.data.userId == 'u-1'", true],
  ])("Inngest docs style: %s -> %s", (source, expected) => {
    expect(compileExpression(source).matches({ event: order, async: reply })).toBe(expected);
  });

  test("a trigger's expression sees no async event", () => {
    expect(compileExpression("async.data.userId == 'u-1'").matches({ event: order })).toBe(false);
  });

  test("keys of any type are strings", () => {
    expect(compileExpression("event.data.userId + ':' + event.data.billing_plan").key({ event: order })).toBe(
      "u-1:enterprise",
    );
    expect(compileExpression("event.data.roles").key({ event: order })).toBe('["admin","buyer"]');
    expect(compileExpression("1 + 1").key({ event: order })).toBe("2");
  });

  test.each([
    "user.id == 1",
    "event.data.items.exists(i, j > 1)",
    "event.data.x == ",
    "event.data.x == 'unterminated",
    "event.data.(x)",
  ])("refuses %s at sync", (source) => {
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
    // As Inngest evaluates a zone: 09:00 in Paris is 08:00 UTC in winter, 07:00 in summer.
    ["TZ=Europe/Paris 0 9 * * *", "2025-01-01T09:00:00Z", "2025-01-02T08:00:00Z"],
    ["TZ=Europe/Paris 0 9 * * *", "2025-07-01T00:00:00Z", "2025-07-01T07:00:00Z"],
    ["0 12 1,15 * 3", "2026-01-01T12:00:00Z", "2026-01-07T12:00:00Z"],
  ])("%s after %s is %s", (cron, after, next) => {
    expect(new Date(parseCron(cron).nextAfter(at(after))).toISOString()).toBe(
      new Date(at(next)).toISOString(),
    );
  });

  test.each([
    "* * * *",
    "0 9 * * * *",
    "61 * * * *",
    "TZ=Mars/Olympus 0 9 * * *",
    "0 0 5-1 * *",
    "0 0 31 2 *",
  ])("refuses %s", (cron) => {
    expect(() => parseCron(cron)).toThrow(/Unsupported cron/);
  });

  test("durations as the SDK writes them", () => {
    expect(parseDurationMs("1w2d3h4m5s")).toBe(((7 + 2) * 24 + 3) * 3_600_000 + 4 * 60_000 + 5_000);
    expect(parseDurationMs("")).toBe(0);
    expect(parseDurationMs("500ms")).toBe(500);
    expect(parseDurationMs("2025-01-01T00:00:00Z")).toBeUndefined();
  });
});
