-- The order's money as Stripe's Checkout Session priced it (issue 39): subtotal, shipping,
-- discount, tax, total, the chosen shipping rate, and per line its subtotal, discount, tax and
-- total (src/payments/money-breakdown.ts MoneyBreakdown). Recorded once by the webhook intake with
-- the move to authorized/paid, never recomputed (docs/decisions/0199-the-money-breakdown-from-stripe.md).
-- Null for orders placed before, and for orders Stripe reported without line items: they keep
-- their lines at their prices, no shipping, discount or tax.
ALTER TABLE "orders" ADD COLUMN "money_breakdown" JSONB;
