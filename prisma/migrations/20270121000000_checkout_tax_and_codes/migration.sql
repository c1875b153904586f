-- Stripe Tax and discount codes at Checkout (issue 39, decision 0204).
-- A product's Stripe tax code (txcd_…); null: the shop's CHECKOUT_DEFAULT_TAX_CODE.
ALTER TABLE "products" ADD COLUMN "tax_code" TEXT;
-- The tax and discount-code switches and each line's tax code a checkout was made with: the
-- checkout sweep rebuilds the Stripe request from them under the same idempotency key, so a
-- configuration changed since must not change it. Null for checkouts made before (no tax, no codes).
ALTER TABLE "checkout_requests" ADD COLUMN "pricing_terms" JSONB;
