-- The destination a checkout was quoted for and the shipping options quoted from the shop's rate
-- table (issue 39): the checkout sweep rebuilds the Stripe request from these under the same
-- idempotency key, so they must not be recomputed (docs/decisions/0197-checkout-shipping-options.md).
-- Null for checkouts without a rate table, as every row before this migration.
ALTER TABLE "checkout_requests" ADD COLUMN "destination" JSONB;
ALTER TABLE "checkout_requests" ADD COLUMN "shipping_options" JSONB;
