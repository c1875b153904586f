/**
 * The money arithmetic of a Checkout Session, kept apart from the HTTP stand-in so it can be
 * tested on its own. All amounts are integers in the currency's minor unit.
 *
 * Rounding, as the stand-in chooses it (docs/stripe-sandbox.md, "Pricing"):
 * - One discount per session (Stripe Checkout accepts at most one). It applies to the line items,
 *   never to shipping. A percent-off coupon takes `round(percent × subtotal of all lines)`; an
 *   amount-off coupon takes `min(amount_off, subtotal)`. That one figure is then shared across the
 *   lines in proportion to their subtotals, by the largest-remainder method (ties to the earlier
 *   line), so the lines' `amount_discount` always add up to the session's `amount_discount`.
 * - Tax is computed per line on what the customer pays for it (subtotal less its discount share),
 *   and on shipping when the destination taxes shipping, each rounded half up on its own (Stripe
 *   Tax rounds per line item); the session's `amount_tax` is their sum. Exclusive (the price's
 *   `tax_behavior` is `exclusive` or unspecified): `round(amount × rate)`, added to the line's
 *   total and the session's. Inclusive: the tax inside the amount, `round(amount × rate ÷ (1 +
 *   rate))`; the line's total is its amount (tax in it), and only exclusive tax adds to
 *   `amount_total`, while `amount_tax` counts both, as Stripe's `total_details` does.
 */

export interface CouponTerms {
  percentOff: number | null;
  amountOff: number | null;
}

export interface TaxTerms {
  /** Percent, e.g. 7.25. */
  percentage: number;
  taxesShipping: boolean;
}

export interface PricingInput {
  /** Each line's unit amount × quantity. */
  lineSubtotals: number[];
  /** Per line (same order): its price's `tax_behavior` is `inclusive`. Absent: all exclusive. */
  lineInclusive?: boolean[];
  /** The chosen shipping rate's `tax_behavior` is `inclusive`. */
  shippingInclusive?: boolean;
  /** The chosen shipping option's amount, or null when the session offers none. */
  shipping: number | null;
  coupon: CouponTerms | null;
  /** Null when no tax is computed (automatic tax off, or no address yet). */
  tax: TaxTerms | null;
}

export interface PricedLine {
  amountSubtotal: number;
  amountDiscount: number;
  amountTax: number;
  /** Tax base of the line: subtotal less its discount share, less the tax inside it when inclusive. */
  taxableAmount: number;
  inclusive: boolean;
  amountTotal: number;
}

export interface PricedSession {
  lines: PricedLine[];
  shipping: { amountSubtotal: number; amountTax: number; amountTotal: number; inclusive: boolean } | null;
  amountSubtotal: number;
  amountDiscount: number;
  amountShipping: number;
  amountTax: number;
  amountTotal: number;
}

/** Half away from zero, on non-negative amounts: half up. */
export function roundHalfUp(value: number): number {
  // The epsilon keeps 0.5 cases that binary floating point lands just under (1.005 × 100) on the up side.
  return Math.floor(value + 0.5 + 1e-9);
}

/**
 * Shares `total` across `weights` in proportion, in whole units, by the largest-remainder
 * method: each gets the floor of its exact share, then the units left go one each to the
 * largest remainders (ties to the earlier). The shares always add up to `total`.
 */
export function allocateProRata(total: number, weights: number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0 || total === 0) return weights.map(() => 0);
  const exact = weights.map((weight) => (total * weight) / sum);
  const shares = exact.map((value) => Math.floor(value + 1e-9));
  let left = total - shares.reduce((a, b) => a + b, 0);
  const order = exact
    .map((value, index) => ({ index, remainder: value - Math.floor(value + 1e-9) }))
    .sort((a, b) => b.remainder - a.remainder || a.index - b.index);
  for (const { index } of order) {
    if (left <= 0) break;
    shares[index] = (shares[index] as number) + 1;
    left -= 1;
  }
  return shares;
}

/** The session's whole discount, before it is shared across lines. */
export function discountTotal(subtotal: number, coupon: CouponTerms | null): number {
  if (!coupon) return 0;
  if (coupon.percentOff !== null)
    return Math.min(subtotal, roundHalfUp((subtotal * coupon.percentOff) / 100));
  return Math.min(subtotal, coupon.amountOff ?? 0);
}

export function taxOn(amount: number, percentage: number): number {
  return roundHalfUp((amount * percentage) / 100);
}

/** The tax inside a tax-inclusive amount: `amount × rate ÷ (1 + rate)`, rounded half up. */
export function taxInside(amount: number, percentage: number): number {
  return roundHalfUp((amount * percentage) / (100 + percentage));
}

export function priceSession(input: PricingInput): PricedSession {
  const amountSubtotal = input.lineSubtotals.reduce((a, b) => a + b, 0);
  const amountDiscount = discountTotal(amountSubtotal, input.coupon);
  const shares = allocateProRata(amountDiscount, input.lineSubtotals);
  const lines = input.lineSubtotals.map((subtotal, index): PricedLine => {
    const discount = shares[index] as number;
    const paid = subtotal - discount;
    const inclusive = input.lineInclusive?.[index] === true;
    if (inclusive) {
      const tax = input.tax ? taxInside(paid, input.tax.percentage) : 0;
      return {
        amountSubtotal: subtotal,
        amountDiscount: discount,
        amountTax: tax,
        taxableAmount: paid - tax,
        inclusive,
        amountTotal: paid,
      };
    }
    const tax = input.tax ? taxOn(paid, input.tax.percentage) : 0;
    return {
      amountSubtotal: subtotal,
      amountDiscount: discount,
      amountTax: tax,
      taxableAmount: paid,
      inclusive,
      amountTotal: paid + tax,
    };
  });
  const shipping =
    input.shipping === null
      ? null
      : (() => {
          const amount = input.shipping;
          const taxed = input.tax?.taxesShipping === true;
          if (input.shippingInclusive === true) {
            const tax = taxed && input.tax ? taxInside(amount, input.tax.percentage) : 0;
            return { amountSubtotal: amount, amountTax: tax, amountTotal: amount, inclusive: true };
          }
          const tax = taxed && input.tax ? taxOn(amount, input.tax.percentage) : 0;
          return { amountSubtotal: amount, amountTax: tax, amountTotal: amount + tax, inclusive: false };
        })();
  const amountTax = lines.reduce((sum, line) => sum + line.amountTax, 0) + (shipping?.amountTax ?? 0);
  // Only tax on top of a price adds to what is paid; inclusive tax is inside the amounts already.
  const exclusiveTax =
    lines.reduce((sum, line) => sum + (line.inclusive ? 0 : line.amountTax), 0) +
    (shipping && !shipping.inclusive ? shipping.amountTax : 0);
  const amountShipping = shipping?.amountSubtotal ?? 0;
  return {
    lines,
    shipping,
    amountSubtotal,
    amountDiscount,
    amountShipping,
    amountTax,
    amountTotal: amountSubtotal - amountDiscount + amountShipping + exclusiveTax,
  };
}
