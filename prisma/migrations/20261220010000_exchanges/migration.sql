-- Exchanges (src/returns): a returned line may ask for another product instead of its money; the
-- new item is reserved, shipped on a label of its own and e-mailed, all on the return's row.
-- AlterTable
ALTER TABLE "return_lines" ADD COLUMN "exchange_sku" TEXT,
ADD COLUMN "exchange_unit_price" INTEGER;

-- AlterTable
ALTER TABLE "returns" ADD COLUMN "exchange_reserved_at" TIMESTAMPTZ(3),
ADD COLUMN "exchange_released_at" TIMESTAMPTZ(3),
ADD COLUMN "exchange_carrier" TEXT,
ADD COLUMN "exchange_tracking_number" TEXT,
ADD COLUMN "exchange_tracking_url" TEXT,
ADD COLUMN "exchange_label_url" TEXT,
ADD COLUMN "exchange_provider_id" TEXT,
ADD COLUMN "exchange_sent_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "returns_exchange_tracking_number_key" ON "returns"("exchange_tracking_number");
