import { z } from "zod";

/**
 * Amounts as people read and type them: in the currency's major unit (12.50 dollars, 1250 yen),
 * with as many decimals as the currency has. Stripe, the API and the database keep minor units
 * (cents); the ops console converts at its edge with these. The number of decimals comes from
 * Intl.NumberFormat's currency data (2 for USD, 0 for JPY, 3 for KWD), not a table of ours, except
 * where that data (CLDR) shows whole units of a currency whose ISO 4217 minor unit, the one Stripe
 * counts in, is the cent: COP, HUF, IDR, PKR and a few more. Intl rounds them to whole units for
 * display, but 1250 from Stripe is still 12.50 of them.
 */
const isoTwoDecimalsShownWhole = new Set([
  "AFN",
  "ALL",
  "COP",
  "HUF",
  "IDR",
  "ISK",
  "LAK",
  "LBP",
  "MMK",
  "PKR",
  "SOS",
  "YER",
]);

const digitsCache = new Map<string, number>();

/** How many minor digits a currency has (USD 2, JPY 0, KWD 3). Throws on a code Intl does not know. */
export function currencyDigits(currency: string): number {
  const code = currency.toUpperCase();
  let digits = digitsCache.get(code);
  if (digits === undefined) {
    const intlDigits =
      new Intl.NumberFormat("en-US", { style: "currency", currency: code }).resolvedOptions()
        .maximumFractionDigits ?? 2;
    digits = isoTwoDecimalsShownWhole.has(code) ? 2 : intlDigits;
    digitsCache.set(code, digits);
  }
  return digits;
}

/** Minor units as a plain major-unit number for a form field: 1250 USD gives "12.50", 1250 JPY "1250". */
export function minorToMajorText(minorUnits: number, currency: string): string {
  const digits = currencyDigits(currency);
  const negative = minorUnits < 0;
  const text = String(Math.abs(minorUnits)).padStart(digits + 1, "0");
  const major = digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
  return negative ? `-${major}` : major;
}

export type ParsedAmount = { ok: true; minorUnits: number } | { ok: false; message: string };

/**
 * A typed amount in major units ("12.50", "12,5", "1 234.00", "12") as minor units, exactly (by its
 * digits, never through a float). Refuses more decimals than the currency has, and anything that is
 * not a plain non-negative number, with a message saying what to type instead.
 */
export function parseMajorUnits(typed: string, currency: string): ParsedAmount {
  const code = currency.toUpperCase();
  const digits = currencyDigits(code);
  const example = digits === 0 ? "1250" : `12.${"5".padEnd(digits, "0")}`;
  const cleaned = typed.trim().replace(/[\s\u00a0\u202f]/g, "");
  const match = /^(\d+)(?:[.,](\d*))?$/.exec(cleaned);
  if (!match) {
    return { ok: false, message: `"${typed.trim()}" is not an amount in ${code}; type it like ${example}` };
  }
  const whole = match[1] ?? "0";
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > digits) {
    return {
      ok: false,
      message:
        digits === 0
          ? `${code} has no decimals; type a whole amount such as ${example}`
          : `${code} has ${digits} decimals at most; type it like ${example}`,
    };
  }
  const minorUnits = Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, "0") || "0");
  if (!Number.isSafeInteger(minorUnits) || minorUnits > 2_147_483_647) {
    return { ok: false, message: `${typed.trim()} ${code} is more than an order can hold` };
  }
  return { ok: true, minorUnits };
}

/**
 * An amount in an API request: minor units (cents), as Stripe takes them. Every refusal says so,
 * with an example, so `12.50` gets "a whole number of minor units (cents)", not "expected int".
 */
export function minorUnitsSchema(options: { min: number; max: number }) {
  const hint = "a whole number of minor units (cents), e.g. 1250 for 12.50 USD or 1250 for ¥1250";
  return z
    .number({
      error: (issue) =>
        `must be ${hint}${issue.input === undefined ? "" : ` (got ${JSON.stringify(issue.input)})`}`,
    })
    .int({
      error: (issue) => {
        const given = Number(issue.input);
        return `must be ${hint}; ${String(issue.input)} has decimals (did you mean ${Math.round(given * 100)}?)`;
      },
    })
    .min(options.min, {
      error:
        options.min === 1
          ? "must be at least 1 minor unit (cent): an amount of zero cannot be charged or refunded"
          : `must be at least ${options.min} minor units (cents)`,
    })
    .max(options.max, { error: `must be at most ${options.max} minor units (cents)` });
}
