import { isAppError } from "../../src/errors";
import { exchangeCharge, parseRestockingFee, returnRefund } from "../../src/returns/return-policy";

describe("a return's refund (RETURN_RESTOCKING_FEE)", () => {
  const lines = [
    { unitPrice: 2500, quantity: 2 },
    { unitPrice: 999, quantity: 1 },
  ];

  it("keeps a share of the lines, rounded to the minor unit", () => {
    expect(returnRefund(lines, parseRestockingFee("10%"))).toEqual({
      linesTotal: 5999,
      fee: 600,
      exchangeCredit: 0,
      amount: 5399,
    });
    expect(returnRefund(lines, parseRestockingFee("12.5%")).fee).toBe(750);
  });

  it("keeps a fixed amount, never more than the lines", () => {
    expect(returnRefund(lines, parseRestockingFee("500")).amount).toBe(5499);
    expect(returnRefund([{ unitPrice: 300, quantity: 1 }], parseRestockingFee("500"))).toMatchObject({
      fee: 300,
      amount: 0,
    });
    expect(returnRefund(lines, parseRestockingFee("0")).amount).toBe(5999);
  });

  it("refunds an exchanged line's difference, with no fee on it", () => {
    const refund = returnRefund(
      [
        { unitPrice: 2500, quantity: 1, exchangeSku: "S", exchangeUnitPrice: 2000 },
        { unitPrice: 1000, quantity: 1 },
      ],
      parseRestockingFee("10%"),
    );
    expect(refund).toEqual({ linesTotal: 1000, fee: 100, exchangeCredit: 500, amount: 1400 });
  });

  it("charges a dearer exchange's difference, and refunds none of it", () => {
    const dearer = [{ unitPrice: 2500, quantity: 2, exchangeSku: "XL", exchangeUnitPrice: 3000 }];
    expect(exchangeCharge(dearer)).toBe(1000);
    expect(returnRefund(dearer, parseRestockingFee("10%"))).toEqual({
      linesTotal: 0,
      fee: 0,
      exchangeCredit: 0,
      amount: 0,
    });
  });

  it("nets exchanges up and down: the money moves once, one way", () => {
    const up = { unitPrice: 2500, quantity: 1, exchangeSku: "XL", exchangeUnitPrice: 3000 };
    const down = { unitPrice: 1000, quantity: 1, exchangeSku: "S", exchangeUnitPrice: 800 };
    expect(exchangeCharge([up, down])).toBe(300);
    expect(returnRefund([up, down], parseRestockingFee("0")).exchangeCredit).toBe(0);
    const bigDown = { ...down, exchangeUnitPrice: 200 };
    expect(exchangeCharge([up, bigDown])).toBe(0);
    expect(returnRefund([up, bigDown], parseRestockingFee("0")).exchangeCredit).toBe(300);
  });

  it("reads the setting as written in the environment: spaces around it, the bounds 0% and 100%", () => {
    expect(parseRestockingFee(" 15% ")).toEqual({ kind: "percent", percent: 15 });
    expect(parseRestockingFee(" 500\n")).toEqual({ kind: "amount", amount: 500 });
    expect(returnRefund(lines, parseRestockingFee("0%"))).toMatchObject({ fee: 0, amount: 5999 });
    expect(returnRefund(lines, parseRestockingFee("100%"))).toMatchObject({ fee: 5999, amount: 0 });
  });

  it("prices a line by what it cost the customer when that is known, by its list price otherwise", () => {
    const worth = ({ sku, quantity }: { sku: string; quantity: number }) =>
      (sku === "MUG" ? 2000 : 0) * quantity;
    expect(
      returnRefund(
        [
          { sku: "MUG", unitPrice: 2500, quantity: 2 },
          { unitPrice: 999, quantity: 1 },
        ],
        parseRestockingFee("0"),
        worth,
      ),
    ).toMatchObject({ linesTotal: 4999, amount: 4999 });
  });

  it("a bad setting stops the service naming the setting and what it takes", () => {
    expect(() => parseRestockingFee("150%")).toThrow(
      "RETURN_RESTOCKING_FEE 150%: a percentage from 0% to 100%",
    );
    expect(() => parseRestockingFee("5.5")).toThrow("RETURN_RESTOCKING_FEE 5.5: an amount in minor units");
  });

  it("refuses a fee that is no percentage or amount", () => {
    for (const bad of ["101%", "-5%", "ten%", "-5", "ten", "1.5"]) {
      let error: unknown;
      try {
        parseRestockingFee(bad);
      } catch (caught) {
        error = caught;
      }
      expect(isAppError(error) && error.code).toBe("validation_failed");
    }
  });
});
