-- Issue 13: the address to ship to, digital products, the carrier's label and tracker, refunds.
ALTER TABLE "products" ADD COLUMN "digital" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "orders" ADD COLUMN "shipping_address" JSONB;

ALTER TABLE "shipments" ADD COLUMN "service" TEXT,
ADD COLUMN "label_url" TEXT,
ADD COLUMN "provider_id" TEXT,
ADD COLUMN "tracker_status" TEXT;

CREATE TYPE "refund_status" AS ENUM ('pending', 'succeeded', 'failed');

-- Written before Stripe is asked: the row's id is the refund's idempotency key.
CREATE TABLE "refunds" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "reason" TEXT,
    "status" "refund_status" NOT NULL DEFAULT 'pending',
    "provider_id" TEXT,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "refunds_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "refunds_amount_positive" CHECK ("amount" > 0)
);

CREATE INDEX "refunds_order_id_idx" ON "refunds"("order_id");

ALTER TABLE "refunds" ADD CONSTRAINT "refunds_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;
