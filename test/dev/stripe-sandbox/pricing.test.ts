import { taxRateFor } from "../../../src/dev/stripe-sandbox/tax-rates";
import {
  allocateProRata,
  discountTotal,
  priceSession,
  roundHalfUp,
  taxOn,
} from "../../../src/dev/stripe-sandbox/pricing";

describe("Stripe stand-in pricing", () => {
  describe("roundHalfUp", () => {
    it("rounds halves up, including the ones floating point lands just under", () => {
      expect(roundHalfUp(2.5)).toBe(3);
      expect(roundHalfUp(2.4999)).toBe(2);
      expect(roundHalfUp(1.005 * 100)).toBe(101);
      expect(roundHalfUp(0)).toBe(0);
    });
  });

  describe("allocateProRata", () => {
    it("shares by weight and always adds up to the total", () => {
      expect(allocateProRata(100, [1, 1, 1])).toEqual([34, 33, 33]);
      expect(allocateProRata(500, [2500, 990])).toEqual([358, 142]);
      const shares = allocateProRata(997, [1234, 5678, 91, 1]);
      expect(shares.reduce((a, b) => a + b, 0)).toBe(997);
    });

    it("gives nothing when there is nothing to share or no weight", () => {
      expect(allocateProRata(0, [5, 5])).toEqual([0, 0]);
      expect(allocateProRata(10, [0, 0])).toEqual([0, 0]);
    });

    it("breaks equal remainders toward the earlier line", () => {
      expect(allocateProRata(1, [1, 1])).toEqual([1, 0]);
    });
  });

  describe("discountTotal", () => {
    it("takes a percentage of the whole subtotal, rounded half up", () => {
      expect(discountTotal(3490, { percentOff: 25.5, amountOff: null })).toBe(890); // 889.95
      expect(discountTotal(3490, { percentOff: 10, amountOff: null })).toBe(349);
    });

    it("takes a fixed amount, never more than the subtotal", () => {
      expect(discountTotal(3490, { percentOff: null, amountOff: 500 })).toBe(500);
      expect(discountTotal(300, { percentOff: null, amountOff: 500 })).toBe(300);
    });

    it("is zero without a coupon", () => {
      expect(discountTotal(3490, null)).toBe(0);
    });
  });

  it("taxOn rounds each amount half up", () => {
    expect(taxOn(2142, 7.25)).toBe(155); // 155.295
    expect(taxOn(1000, 8.875)).toBe(89); // 88.75
  });

  describe("priceSession", () => {
    it("without discount, shipping or tax the total is the subtotal", () => {
      const priced = priceSession({ lineSubtotals: [2500, 990], shipping: null, coupon: null, tax: null });
      expect(priced).toMatchObject({
        amountSubtotal: 3490,
        amountDiscount: 0,
        amountShipping: 0,
        amountTax: 0,
        amountTotal: 3490,
        shipping: null,
      });
      expect(priced.lines.map((line) => line.amountTotal)).toEqual([2500, 990]);
    });

    it("discounts the lines only, taxes what is left per line and the shipping when taxed", () => {
      const priced = priceSession({
        lineSubtotals: [2500, 990],
        shipping: 799,
        coupon: { percentOff: 20, amountOff: null },
        tax: { percentage: 8.875, taxesShipping: true },
      });
      // Discount 698 shared 500 / 198; tax 8.875 % of 2000 = 177.5 → 178, of 792 = 70.29 → 70,
      // of the shipping 799 = 70.91 → 71.
      expect(priced.lines).toEqual([
        {
          amountSubtotal: 2500,
          amountDiscount: 500,
          taxableAmount: 2000,
          amountTax: 178,
          amountTotal: 2178,
          inclusive: false,
        },
        {
          amountSubtotal: 990,
          amountDiscount: 198,
          taxableAmount: 792,
          amountTax: 70,
          amountTotal: 862,
          inclusive: false,
        },
      ]);
      expect(priced.shipping).toEqual({
        amountSubtotal: 799,
        amountTax: 71,
        amountTotal: 870,
        inclusive: false,
      });
      expect(priced).toMatchObject({
        amountSubtotal: 3490,
        amountDiscount: 698,
        amountShipping: 799,
        amountTax: 319,
        amountTotal: 3490 - 698 + 799 + 319,
      });
    });

    it("leaves shipping untaxed where the destination does not tax it", () => {
      const priced = priceSession({
        lineSubtotals: [1000],
        shipping: 500,
        coupon: null,
        tax: { percentage: 7.25, taxesShipping: false },
      });
      expect(priced.shipping).toEqual({
        amountSubtotal: 500,
        amountTax: 0,
        amountTotal: 500,
        inclusive: false,
      });
      expect(priced.amountTax).toBe(73); // 72.5
      expect(priced.amountTotal).toBe(1573);
    });

    it("finds inclusive tax inside the amounts: the totals stay the prices, only exclusive tax adds", () => {
      const priced = priceSession({
        lineSubtotals: [2500, 990],
        lineInclusive: [true, false],
        shipping: 599,
        shippingInclusive: true,
        coupon: { percentOff: 20, amountOff: null },
        tax: { percentage: 20, taxesShipping: true },
      });
      // 2000 × 20/120 = 333.33 → 333 inside; 792 × 20 % = 158.4 → 158 on top; 599 × 20/120 = 99.83 → 100 inside.
      expect(priced.lines.map((line) => [line.amountTax, line.taxableAmount, line.amountTotal])).toEqual([
        [333, 1667, 2000],
        [158, 792, 950],
      ]);
      expect(priced.shipping).toEqual({
        amountSubtotal: 599,
        amountTax: 100,
        amountTotal: 599,
        inclusive: true,
      });
      expect(priced.amountTax).toBe(333 + 158 + 100);
      expect(priced.amountTotal).toBe(3490 - 698 + 599 + 158);
      expect(priced.amountTotal).toBe(2000 + 950 + 599);
    });

    it("the lines' discounts and taxes add up to the session's for awkward amounts", () => {
      const priced = priceSession({
        lineSubtotals: [333, 333, 334, 1],
        shipping: 0,
        coupon: { percentOff: null, amountOff: 250 },
        tax: { percentage: 19, taxesShipping: true },
      });
      expect(priced.lines.reduce((sum, line) => sum + line.amountDiscount, 0)).toBe(250);
      expect(priced.lines.reduce((sum, line) => sum + line.amountTax, 0)).toBe(priced.amountTax);
      expect(priced.amountTotal).toBe(
        priced.lines.reduce((sum, line) => sum + line.amountTotal, 0) + (priced.shipping?.amountTotal ?? 0),
      );
    });
  });
});

describe("Stripe stand-in tax rate table", () => {
  it("finds a state's rate, else the country's, else none", () => {
    expect(taxRateFor("US", "ca")).toMatchObject({ percentage: 7.25, taxesShipping: false });
    expect(taxRateFor("de", null)).toMatchObject({ percentage: 19, taxType: "vat" });
    expect(taxRateFor("CA", "ON")).toMatchObject({ percentage: 5, taxType: "gst" });
    expect(taxRateFor("US", "OR")).toBeNull();
    expect(taxRateFor("FR", null)).toBeNull();
  });
});
