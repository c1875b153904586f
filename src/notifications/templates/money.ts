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
    entry = { format, digits: format.resolvedOptions().maximumFractionDigits ?? 2 };
    formatters.set(key, entry);
  }
  return entry;
}

/**
 * Formats an amount in minor units (what Stripe and the database store) for customers.
 * The number of minor digits comes from the currency itself (2 for USD, 0 for JPY, 3 for KWD).
 */
export function formatMoney(minorUnits: number, currency: string, locale = "en-US"): string {
  const { format, digits } = formatterFor(locale, currency.toUpperCase());
  return format.format(minorUnits / 10 ** digits);
}
