import { AppError } from "../errors";

/**
 * RETURN_RESTOCKING_FEE, read once: a share of the returned lines ("10%": rounded to the minor
 * unit, half up) or a fixed amount in minor units per return ("500"), never more than the lines
 * are worth. "0" (the default) keeps nothing.
 */
export type RestockingFee = { kind: "percent"; percent: number } | { kind: "amount"; amount: number };

export function parseRestockingFee(value: string): RestockingFee {
  const text = value.trim();
  if (text.endsWith("%")) {
    const percent = Number(text.slice(0, -1));
    if (!Number.isFinite(percent) || percent < 0 || percent > 100) {
      throw new AppError("validation_failed", `RETURN_RESTOCKING_FEE ${value}: a percentage from 0% to 100%`);
    }
    return { kind: "percent", percent };
  }
  const amount = Number(text);
  if (!Number.isInteger(amount) || amount < 0) {
    throw new AppError(
      "validation_failed",
      `RETURN_RESTOCKING_FEE ${value}: an amount in minor units (cents), such as 500 for 5.00`,
    );
  }
  return { kind: "amount", amount };
}

export interface ReturnRefund {
  /**
   * What the lines returned for money cost the customer: with Stripe's breakdown, their price
   * plus tax share less discount share, pro-rated per unit (src/returns/return-money.ts); without
   * one, unit price × quantity, summed.
   */
  linesTotal: number;
  /** The restocking fee, kept of linesTotal (exchanged lines pay none: the shop sells again). */
  fee: number;
  /** What the exchanged lines cost more, together, than their replacements: refunded too. */
  exchangeCredit: number;
  /** linesTotal − fee + exchangeCredit: what goes back to the card. */
  amount: number;
}

type PricedLine = {
  unitPrice: number;
  quantity: number;
  exchangeSku?: string | null;
  exchangeUnitPrice?: number | null;
};

/**
 * The exchanged lines' difference, all lines of the return together: the new items' price less
 * what the returned ones cost. Positive: the customer owes it (charged off-session, once);
 * negative: the shop owes it (part of the return's one refund). Netted, so an exchange of one
 * line up and another down moves money once, one way.
 */
export function exchangeDifference(lines: readonly PricedLine[]): number {
  return lines
    .filter((line) => line.exchangeSku)
    .reduce((sum, line) => sum + ((line.exchangeUnitPrice ?? 0) - line.unitPrice) * line.quantity, 0);
}

/** What a dearer exchange charges (0 when the new items cost no more). */
export function exchangeCharge(lines: readonly PricedLine[]): number {
  return Math.max(0, exchangeDifference(lines));
}

export function returnRefund(
  lines: readonly (PricedLine & { sku?: string })[],
  fee: RestockingFee,
  worth?: (line: { sku: string; quantity: number }) => number,
): ReturnRefund {
  const forMoney = lines.filter((line) => !line.exchangeSku);
  const linesTotal = forMoney.reduce(
    (sum, line) =>
      sum +
      (worth && line.sku !== undefined
        ? worth({ sku: line.sku, quantity: line.quantity })
        : line.unitPrice * line.quantity),
    0,
  );
  const exchangeCredit = Math.max(0, -exchangeDifference(lines));
  const kept =
    fee.kind === "percent" ? Math.round((linesTotal * fee.percent) / 100) : Math.min(fee.amount, linesTotal);
  return { linesTotal, fee: kept, exchangeCredit, amount: linesTotal - kept + exchangeCredit };
}

/** Why a customer sends something back (the form's choices; ops may say "other" with a note). */
export const returnReasons = [
  "damaged",
  "wrong_item",
  "not_as_described",
  "no_longer_needed",
  "other",
] as const;
export type ReturnReason = (typeof returnReasons)[number];

/** resellable: back on the shelf (restocked); damaged: written off, still refunded. */
export const returnConditions = ["resellable", "damaged"] as const;
export type ReturnCondition = (typeof returnConditions)[number];

/** Who acts on a return: the customer's page, ops through a door, the carrier's tracker. */
export type ReturnActor = "customer" | "admin-api" | "ops-console" | "carrier";
