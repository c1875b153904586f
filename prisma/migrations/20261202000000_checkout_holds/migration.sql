-- Stock held for an open Checkout Session (issue 11, part 3), and the checkout request behind each
-- order, for Idempotency-Key replays and for the sweep that finishes half-made checkouts (issue 14).

-- CreateEnum
CREATE TYPE "stock_hold_status" AS ENUM ('held', 'converted', 'released');

-- CreateTable
CREATE TABLE "stock_holds" (
    "order_id" UUID NOT NULL,
    "sku" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "status" "stock_hold_status" NOT NULL DEFAULT 'held',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "stock_holds_pkey" PRIMARY KEY ("order_id","sku"),
    CONSTRAINT "stock_holds_quantity_positive" CHECK ("quantity" > 0)
);

-- CreateTable
CREATE TABLE "checkout_requests" (
    "order_id" UUID NOT NULL,
    "customer_id" TEXT NOT NULL,
    "idempotency_key" TEXT,
    "request_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "checkout_requests_pkey" PRIMARY KEY ("order_id")
);

-- CreateIndex
CREATE INDEX "stock_holds_status_expires_at_idx" ON "stock_holds"("status", "expires_at");

-- CreateIndex
CREATE INDEX "stock_holds_sku_idx" ON "stock_holds"("sku");

-- CreateIndex
CREATE UNIQUE INDEX "checkout_requests_customer_id_idempotency_key_key" ON "checkout_requests"("customer_id", "idempotency_key");

-- AddForeignKey
ALTER TABLE "stock_holds" ADD CONSTRAINT "stock_holds_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "stock_holds" ADD CONSTRAINT "stock_holds_sku_fkey" FOREIGN KEY ("sku") REFERENCES "products"("sku") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "checkout_requests" ADD CONSTRAINT "checkout_requests_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;
