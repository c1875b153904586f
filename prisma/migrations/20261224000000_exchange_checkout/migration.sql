-- A dearer exchange's charge the bank refused with authentication_required is paid on a Stripe
-- Checkout page (docs/decisions/0150): the return keeps that one session (key
-- exchange-checkout-<returnId>) and its charge waits as awaiting_payment; paid, it becomes the
-- exchange's charge (charged, its PaymentIntent the session's); never paid, unpaid.
-- AlterTable
ALTER TABLE "returns" ADD COLUMN "exchange_checkout_session_id" TEXT;

ALTER TABLE "returns" DROP CONSTRAINT "returns_exchange_charge_status_check";
ALTER TABLE "returns" ADD CONSTRAINT "returns_exchange_charge_status_check"
    CHECK ("exchange_charge_status" IN ('charged', 'failed', 'refunded', 'awaiting_payment', 'unpaid'));

-- CreateIndex
CREATE UNIQUE INDEX "returns_exchange_checkout_session_id_key" ON "returns"("exchange_checkout_session_id");
