-- Catalog and stock ledger: product weights and dimensions, a low-stock threshold, archiving and
-- an edit version; every change of stock_on_hand becomes a stock_movements row.
CREATE TYPE "stock_movement_reason" AS ENUM ('received', 'adjusted', 'counted', 'reserved', 'released', 'returned', 'written-off');

ALTER TABLE "products" ADD COLUMN "weight_oz" DOUBLE PRECISION,
ADD COLUMN "length_in" DOUBLE PRECISION,
ADD COLUMN "width_in" DOUBLE PRECISION,
ADD COLUMN "height_in" DOUBLE PRECISION,
ADD COLUMN "low_stock_threshold" INTEGER,
ADD COLUMN "low_stock_alerted_at" TIMESTAMPTZ(3),
ADD COLUMN "archived_at" TIMESTAMPTZ(3),
ADD COLUMN "version" INTEGER NOT NULL DEFAULT 1,
ADD CONSTRAINT "products_weight_positive" CHECK ("weight_oz" IS NULL OR "weight_oz" > 0),
ADD CONSTRAINT "products_dimensions_positive" CHECK (
  ("length_in" IS NULL OR "length_in" > 0) AND ("width_in" IS NULL OR "width_in" > 0) AND ("height_in" IS NULL OR "height_in" > 0)),
ADD CONSTRAINT "products_low_stock_threshold_non_negative" CHECK ("low_stock_threshold" IS NULL OR "low_stock_threshold" >= 0);

-- CreateTable
CREATE TABLE "stock_movements" (
    "id" BIGSERIAL NOT NULL,
    "sku" TEXT NOT NULL,
    "delta" INTEGER NOT NULL,
    "reason" "stock_movement_reason" NOT NULL,
    "actor" TEXT NOT NULL,
    "order_id" UUID,
    "note" TEXT,
    "stock_after" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stock_movements_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "stock_movements_sku_id_idx" ON "stock_movements"("sku", "id");

-- AddForeignKey
ALTER TABLE "stock_movements" ADD CONSTRAINT "stock_movements_sku_fkey" FOREIGN KEY ("sku") REFERENCES "products"("sku") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The ledger opens with what is on the shelf today: one counted movement per product with stock.
INSERT INTO "stock_movements" ("sku", "delta", "reason", "actor", "note", "stock_after")
SELECT "sku", "stock_on_hand", 'counted', 'migration', 'opening balance', "stock_on_hand"
FROM "products" WHERE "stock_on_hand" <> 0;
