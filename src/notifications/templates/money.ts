import { currencyDigits } from "../../shared/money";

/**
 * One formatter per locale and currency, built once: building an Intl.NumberFormat costs far more
 * than formatting with it, and every e-mail formats each line and the total (docs/benchmarks.md).
 */
const formatters = new Map<string, { format: Intl.NumberFormat; digits: number }>();

function formatterFor(locale: string, currency: string) {
  const key = `${locale}|${currency}`;
  let entry = formatters.get(key);
  if (!entry) {
    const format = new Intl.NumberFormat(locale, { style: "currency", currency });
    // The minor unit Stripe counts in (src/shared/money.ts), which Intl's display digits may round.
    entry = { format, digits: currencyDigits(currency) };
    formatters.set(key, entry);
  }
  return entry;
}

/**
 * Formats an amount in minor units (what Stripe and the database store) for customers.
 * The number of minor digits comes from the currency itself (2 for USD, 0 for JPY, 3 for KWD).
 * Shown as Intl shows the currency: COP 1250 (minor units) is "COP 13", rounded as people write it.
 */
export function formatMoney(minorUnits: number, currency: string, locale = "en-US"): string {
  const { format, digits } = formatterFor(locale, currency.toUpperCase());
  return format.format(minorUnits / 10 ** digits);
}
