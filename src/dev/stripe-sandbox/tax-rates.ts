/**
 * The stand-in's Stripe Tax: a small, fixed table of rates by destination. It is plainly a
 * stand-in (real rates depend on the product's tax code, the shop's registrations, local
 * districts and more); what it keeps from Stripe Tax is the shape of the answer (a Tax Rate per
 * jurisdiction, `taxability_reason`, shipping taxed or not per jurisdiction) so code that records
 * Stripe's computed tax can be exercised offline. docs/stripe-sandbox.md lists the table.
 */
export interface StandInTaxRate {
  /** Stable id, shaped like Stripe's `txr_…`, so repeated sessions name the same rate. */
  id: string;
  country: string;
  /** ISO 3166-2 subdivision code without the country, e.g. "CA" for California; null nationwide. */
  state: string | null;
  jurisdiction: string;
  jurisdictionLevel: "state" | "country";
  displayName: string;
  taxType: "sales_tax" | "vat" | "gst";
  percentage: number;
  /** Whether the jurisdiction taxes the shipping charge too. */
  taxesShipping: boolean;
}

const rate = (fields: Omit<StandInTaxRate, "id">): StandInTaxRate => ({
  id: `txr_standin_${fields.country}${fields.state ? `_${fields.state}` : ""}`,
  ...fields,
});

export const standInTaxRates: readonly StandInTaxRate[] = [
  rate({
    country: "US",
    state: "CA",
    jurisdiction: "CALIFORNIA",
    jurisdictionLevel: "state",
    displayName: "Sales Tax",
    taxType: "sales_tax",
    percentage: 7.25,
    taxesShipping: false,
  }),
  rate({
    country: "US",
    state: "NY",
    jurisdiction: "NEW YORK",
    jurisdictionLevel: "state",
    displayName: "Sales Tax",
    taxType: "sales_tax",
    percentage: 4,
    taxesShipping: true,
  }),
  rate({
    country: "US",
    state: "TX",
    jurisdiction: "TEXAS",
    jurisdictionLevel: "state",
    displayName: "Sales Tax",
    taxType: "sales_tax",
    percentage: 6.25,
    taxesShipping: true,
  }),
  rate({
    country: "US",
    state: "WA",
    jurisdiction: "WASHINGTON",
    jurisdictionLevel: "state",
    displayName: "Sales Tax",
    taxType: "sales_tax",
    percentage: 6.5,
    taxesShipping: true,
  }),
  rate({
    country: "CA",
    state: null,
    jurisdiction: "CA",
    jurisdictionLevel: "country",
    displayName: "GST",
    taxType: "gst",
    percentage: 5,
    taxesShipping: true,
  }),
  rate({
    country: "GB",
    state: null,
    jurisdiction: "GB",
    jurisdictionLevel: "country",
    displayName: "VAT",
    taxType: "vat",
    percentage: 20,
    taxesShipping: true,
  }),
  rate({
    country: "DE",
    state: null,
    jurisdiction: "DE",
    jurisdictionLevel: "country",
    displayName: "VAT",
    taxType: "vat",
    percentage: 19,
    taxesShipping: true,
  }),
];

/**
 * The rate for a destination: the state's, else the country's; null where the stand-in's shop
 * collects no tax (Stripe Tax then answers `taxability_reason: "not_collecting"` with 0 tax).
 */
export function taxRateFor(country: string, state: string | null | undefined): StandInTaxRate | null {
  const upperCountry = country.toUpperCase();
  const upperState = state?.toUpperCase() ?? null;
  return (
    standInTaxRates.find((entry) => entry.country === upperCountry && entry.state === upperState) ??
    standInTaxRates.find((entry) => entry.country === upperCountry && entry.state === null) ??
    null
  );
}
