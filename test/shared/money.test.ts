import { supportedCurrencies, isSupportedCurrency } from "../../src/inventory/currencies";
import { currencyDigits, minorToMajorText, minorUnitsSchema, parseMajorUnits } from "../../src/shared/money";

describe("amounts as people type them (major units) and as Stripe takes them (minor units)", () => {
  it.each([
    ["12.50", "usd", 1250],
    ["12.5", "USD", 1250],
    ["12,50", "eur", 1250],
    ["12", "usd", 1200],
    ["1 234.56", "usd", 123456],
    ["0.07", "usd", 7],
    ["1250", "jpy", 1250],
    ["1250.00", "jpy", 1250],
    ["1.234", "kwd", 1234],
    ["19.99", "usd", 1999],
  ])("%s %s is %d minor units", (typed, currency, minor) => {
    expect(parseMajorUnits(typed, currency)).toEqual({ ok: true, minorUnits: minor });
  });

  it.each([
    ["12.505", "usd", /USD has 2 decimals at most/],
    ["12.5", "jpy", /JPY has no decimals/],
    ["abc", "usd", /not an amount in USD; type it like 12.50/],
    ["-5", "usd", /not an amount/],
    ["1e3", "usd", /not an amount/],
    ["99999999999", "usd", /more than an order can hold/],
  ])("%s %s is refused", (typed, currency, message) => {
    const parsed = parseMajorUnits(typed, currency);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? "" : parsed.message).toMatch(message);
  });

  it("takes each currency's decimals from Intl: 2 for USD, 0 for JPY and KRW, 3 for KWD", () => {
    expect([
      currencyDigits("usd"),
      currencyDigits("JPY"),
      currencyDigits("krw"),
      currencyDigits("kwd"),
    ]).toEqual([2, 0, 0, 3]);
    expect(minorToMajorText(1250, "usd")).toBe("12.50");
    expect(minorToMajorText(7, "usd")).toBe("0.07");
    expect(minorToMajorText(1250, "jpy")).toBe("1250");
    expect(minorToMajorText(1234, "kwd")).toBe("1.234");
  });

  it("an API amount that is not whole minor units says minor units (cents)", () => {
    const schema = minorUnitsSchema({ min: 1, max: 100_000 });
    const messageOf = (value: unknown) => {
      const parsed = schema.safeParse(value);
      return parsed.success ? "" : (parsed.error.issues[0]?.message ?? "");
    };
    expect(messageOf(12.5)).toMatch(/whole number of minor units \(cents\).*did you mean 1250\?/);
    expect(messageOf("12.50")).toMatch(/minor units \(cents\).*got "12.50"/);
    expect(messageOf(0)).toMatch(/at least 1 minor unit \(cent\)/);
    expect(messageOf(100_001)).toMatch(/at most 100000 minor units \(cents\)/);
    expect(schema.parse(1250)).toBe(1250);
  });
});

describe("the currencies a product may be priced in", () => {
  it("are Stripe's, real ISO 4217 codes, never xxx or a test code", () => {
    expect(isSupportedCurrency("usd")).toBe(true);
    expect(isSupportedCurrency("EUR")).toBe(true);
    expect(isSupportedCurrency("jpy")).toBe(true);
    for (const code of ["xxx", "xts", "abc", "isk"]) expect(isSupportedCurrency(code)).toBe(false);
    expect(supportedCurrencies.size).toBeGreaterThan(120);
  });

  it("have the decimals Stripe expects: Stripe's zero-decimal currencies have no decimals in Intl", () => {
    // https://docs.stripe.com/currencies#zero-decimal
    const stripeZeroDecimal = [
      "bif",
      "clp",
      "djf",
      "gnf",
      "jpy",
      "kmf",
      "krw",
      "mga",
      "pyg",
      "rwf",
      "ugx",
      "vnd",
      "vuv",
      "xaf",
      "xof",
      "xpf",
    ];
    for (const code of stripeZeroDecimal) {
      expect(isSupportedCurrency(code)).toBe(true);
      expect([code, currencyDigits(code)]).toEqual([code, 0]);
    }
    for (const code of ["huf", "twd", "idr", "usd", "eur", "gbp"])
      expect([code, currencyDigits(code)]).toEqual([code, 2]);
  });
});
