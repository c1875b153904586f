-- A dearer exchange charges the difference off-session on the card the customer paid with:
-- checkout now saves it (a Stripe Customer and setup_future_usage=off_session), and the intake
-- keeps the customer and payment method Stripe reports on the order's PaymentIntent. Orders paid
-- before have neither, and a dearer exchange is refused for them.
-- AlterTable
ALTER TABLE "orders" ADD COLUMN "stripe_customer_id" TEXT,
ADD COLUMN "payment_method_id" TEXT;

-- The one off-session charge of an exchange (Stripe key exchange-charge-<returnId>): what is
-- owed, Stripe's PaymentIntent, how it went (charged, failed, refunded) and its undo's refund.
-- AlterTable
ALTER TABLE "returns" ADD COLUMN "exchange_charge_amount" INTEGER,
ADD COLUMN "exchange_charge_status" TEXT,
ADD COLUMN "exchange_charge_intent_id" TEXT,
ADD COLUMN "exchange_charge_error" TEXT,
ADD COLUMN "exchange_charged_at" TIMESTAMPTZ(3),
ADD COLUMN "exchange_charge_refund_id" TEXT;

ALTER TABLE "returns" ADD CONSTRAINT "returns_exchange_charge_status_check"
    CHECK ("exchange_charge_status" IN ('charged', 'failed', 'refunded'));

-- CreateIndex
CREATE UNIQUE INDEX "returns_exchange_charge_intent_id_key" ON "returns"("exchange_charge_intent_id");

-- The exchange parcel's own tracker (its tracking number is the return's exchange_tracking_number):
-- the latest status, and when the carrier delivered it.
-- AlterTable
ALTER TABLE "returns" ADD COLUMN "exchange_tracker_status" TEXT,
ADD COLUMN "exchange_delivered_at" TIMESTAMPTZ(3);
