-- An order ships in one or more parcels, each its own shipments row (docs/shipping.md, decision 0100).
-- Existing rows are parcel 1, generation 0: exactly what they were.

-- DropIndex
DROP INDEX "shipments_order_id_key";

-- AlterTable
ALTER TABLE "shipments" ADD COLUMN "parcel_number" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN "generation" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "lines" JSONB,
ADD COLUMN "superseded_at" TIMESTAMPTZ(3),
ADD COLUMN "reship_started_at" TIMESTAMPTZ(3);

-- CreateIndex
CREATE UNIQUE INDEX "shipments_order_id_parcel_number_generation_key" ON "shipments"("order_id", "parcel_number", "generation");

-- AlterTable
ALTER TABLE "products" ADD COLUMN "ships_alone" BOOLEAN NOT NULL DEFAULT false;
