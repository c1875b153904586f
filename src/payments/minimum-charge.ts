import { minorToMajorText } from "../shared/money";

/**
 * Stripe's minimum charge amounts ("Minimum and maximum charge amounts",
 * docs.stripe.com/currencies#minimum-and-maximum-charge-amounts), in minor units, for the
 * currencies a shop here is likely to sell in. One table for the service's check before a checkout
 * is written and for the Stripe stand-in's refusal (src/dev/stripe-sandbox), so the two cannot
 * drift apart. Stripe states the minimum for a charge in the settlement currency too; a shop
 * charging in its own currency (the case here) meets exactly these. A currency not listed is not
 * checked here: Stripe's own refusal still answers 422 `amount_too_small` (checkout-service.ts).
 */
export const minimumChargeAmounts: Readonly<Record<string, number>> = {
  usd: 50,
  aed: 200,
  aud: 50,
  bgn: 100,
  brl: 50,
  cad: 50,
  chf: 50,
  czk: 1500,
  dkk: 250,
  eur: 50,
  gbp: 30,
  hkd: 400,
  // Stripe counts HUF in cents (two decimals) although it is shown whole: 175.00 Ft.
  huf: 17500,
  inr: 50,
  jpy: 50,
  mxn: 1000,
  myr: 200,
  nok: 300,
  nzd: 50,
  pln: 200,
  ron: 200,
  sek: 300,
  sgd: 50,
  thb: 1000,
};

/** The minimum for a currency (any case), or undefined when the table has none. */
export function minimumChargeFor(currency: string): number | undefined {
  return minimumChargeAmounts[currency.toLowerCase()];
}

/**
 * The minimum an amount falls short of, or null when it may be charged. Zero is not refused: a
 * session Stripe charges nothing for (a 100 % discount) needs no payment at all.
 */
export function shortOfMinimumCharge(amount: number, currency: string): number | null {
  const minimum = minimumChargeFor(currency);
  if (minimum === undefined || amount === 0 || amount >= minimum) return null;
  return minimum;
}

/** "0.50 USD", "50 JPY": the minimum as people read it, in the currency's major unit. */
export function minimumChargeText(minimum: number, currency: string): string {
  return `${minorToMajorText(minimum, currency)} ${currency.toUpperCase()}`;
}
