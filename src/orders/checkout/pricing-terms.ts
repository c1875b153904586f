import { AppError } from "../../errors";
import type { CheckoutPricingTerms } from "../../payments/stripe-checkout";

/** The shop's Stripe Tax and discount-code settings (CHECKOUT_* in src/config.ts, decision 0204). */
export interface CheckoutPricingSettings {
  automaticTax: boolean;
  taxBehavior: "exclusive" | "inclusive";
  /** For products without a tax code of their own; unset, such a product cannot be sold with tax on. */
  defaultTaxCode?: string | undefined;
  allowPromotionCodes: boolean;
}

/**
 * The terms a new checkout is made with, or null when the shop uses neither tax nor codes (the
 * request is then what it always was). Refuses (422 `tax_code_required`), before anything is
 * written, a product Stripe Tax could not classify: no tax code of its own and no shop default.
 */
export function pricingTermsFor(
  settings: CheckoutPricingSettings | undefined,
  products: readonly { sku: string; taxCode?: string | null | undefined }[],
): CheckoutPricingTerms | null {
  if (!settings || (!settings.automaticTax && !settings.allowPromotionCodes)) return null;
  const taxCodes: Record<string, string> = {};
  if (settings.automaticTax) {
    const missing: string[] = [];
    for (const { sku, taxCode } of products) {
      const code = taxCode ?? settings.defaultTaxCode;
      if (code) taxCodes[sku] = code;
      else missing.push(sku);
    }
    if (missing.length > 0) {
      throw new AppError(
        "tax_code_required",
        `No tax code for ${missing.join(", ")}: set the product's taxCode, or CHECKOUT_DEFAULT_TAX_CODE for the shop`,
        { details: { skus: missing } },
      );
    }
  }
  return {
    automaticTax: settings.automaticTax,
    taxBehavior: settings.taxBehavior,
    allowPromotionCodes: settings.allowPromotionCodes,
    taxCodes,
  };
}

/** checkout_requests.pricing_terms as written (null for checkouts made without, or before). */
export function storedPricingTerms(value: unknown): CheckoutPricingTerms | null {
  if (value === null || value === undefined || typeof value !== "object") return null;
  return value as CheckoutPricingTerms;
}
