/**
 * Formats an amount in minor units (what Stripe and the database store) for customers.
 * The number of minor digits comes from the currency itself (2 for USD, 0 for JPY, 3 for KWD).
 */
export function formatMoney(minorUnits: number, currency: string, locale = "en-US"): string {
  const formatter = new Intl.NumberFormat(locale, { style: "currency", currency: currency.toUpperCase() });
  const digits = formatter.resolvedOptions().maximumFractionDigits ?? 2;
  return formatter.format(minorUnits / 10 ** digits);
}
