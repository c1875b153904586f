import {
  breakdownProblems,
  nextUnitsWorth,
  shortUnitsWorth,
  unitsWorth,
  type MoneyBreakdown,
} from "../../src/payments/money-breakdown";

describe("the pro-rating rule (cumulative floor)", () => {
  const line = { amountTotal: 3445, quantity: 3 };

  it("values a line's first n units at floor(total × n ÷ quantity), all of them at its total", () => {
    expect([0, 1, 2, 3].map((n) => unitsWorth(line, n))).toEqual([0, 1148, 2296, 3445]);
    // Never past the line's units either way.
    expect(unitsWorth(line, 5)).toBe(3445);
    expect(unitsWorth(line, -1)).toBe(0);
  });

  it("refunds every unit of a line to its total to the cent, however the returns split it", () => {
    for (const quantity of [1, 2, 3, 7, 12]) {
      for (const total of [0, 1, 99, 1001, 3445, 99_999]) {
        const each = { amountTotal: total, quantity };
        const oneByOne = Array.from({ length: quantity }, (_, i) => nextUnitsWorth(each, i, 1));
        expect(oneByOne.reduce((a, b) => a + b, 0)).toBe(total);
        // Two returns: the first k units, then the rest.
        for (let k = 0; k <= quantity; k++) {
          expect(nextUnitsWorth(each, 0, k) + nextUnitsWorth(each, k, quantity - k)).toBe(total);
        }
        // Short units are the last ones: shipped (later returned) plus short make the total.
        for (let short = 0; short <= quantity; short++) {
          expect(unitsWorth(each, quantity - short) + shortUnitsWorth(each, short)).toBe(total);
        }
      }
    }
  });
});

describe("Stripe's figures must add up", () => {
  const money: MoneyBreakdown = {
    currency: "usd",
    subtotal: 6100,
    shipping: 1500,
    discount: 915,
    tax: 267,
    total: 6952,
    shippingRate: {
      shippingRateId: "shr_1",
      displayName: "Express",
      metadata: { rateId: "express" },
      amountSubtotal: 1500,
      amountTax: 60,
      amountTotal: 1560,
    },
    lines: [
      {
        sku: "MUG",
        quantity: 3,
        amountSubtotal: 3600,
        amountDiscount: 540,
        amountTax: 122,
        amountTotal: 3182,
      },
      {
        sku: "TEE",
        quantity: 1,
        amountSubtotal: 2500,
        amountDiscount: 375,
        amountTax: 85,
        amountTotal: 2210,
      },
    ],
  };

  it("finds no problem in a consistent breakdown", () => {
    expect(breakdownProblems(money)).toEqual([]);
  });

  it("names a total the lines and shipping do not make, and a subtotal the lines do not make", () => {
    expect(breakdownProblems({ ...money, total: 6953, subtotal: 6000 })).toEqual([
      "line items' amount_subtotal add up to 6100, not 6000",
      "line items' and shipping's amount_total add up to 6952, not amount_total 6953",
    ]);
  });
});
