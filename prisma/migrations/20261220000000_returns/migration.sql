-- Returns after delivery (src/returns): one row per return, its lines, and its own return label
-- and tracker (never a row of `shipments`, which holds the outbound parcels).
-- CreateEnum
CREATE TYPE "return_status" AS ENUM ('requested', 'approved', 'received', 'closed', 'rejected', 'cancelled');

-- CreateTable
CREATE TABLE "returns" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "status" "return_status" NOT NULL DEFAULT 'requested',
    "reason" TEXT NOT NULL,
    "note" TEXT,
    "requested_by" TEXT NOT NULL,
    "label_carrier" TEXT,
    "label_tracking_number" TEXT,
    "label_tracking_url" TEXT,
    "label_url" TEXT,
    "label_provider_id" TEXT,
    "label_tracker_status" TEXT,
    "label_refund_status" TEXT,
    "label_sent_at" TIMESTAMPTZ(3),
    "condition" TEXT,
    "received_by" TEXT,
    "received_at" TIMESTAMPTZ(3),
    "refund_amount" INTEGER,
    "restocking_fee" INTEGER,
    "refunded_at" TIMESTAMPTZ(3),
    "restocked_at" TIMESTAMPTZ(3),
    "written_off_at" TIMESTAMPTZ(3),
    "decided_by" TEXT,
    "decision_note" TEXT,
    "closed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "returns_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "returns_condition_check" CHECK ("condition" IS NULL OR "condition" IN ('resellable', 'damaged'))
);

-- CreateTable
CREATE TABLE "return_lines" (
    "return_id" UUID NOT NULL,
    "sku" TEXT NOT NULL,
    "quantity" INTEGER NOT NULL,
    "unit_price" INTEGER NOT NULL,

    CONSTRAINT "return_lines_pkey" PRIMARY KEY ("return_id", "sku"),
    CONSTRAINT "return_lines_quantity_check" CHECK ("quantity" > 0)
);

-- CreateIndex
CREATE UNIQUE INDEX "returns_label_tracking_number_key" ON "returns"("label_tracking_number");

-- CreateIndex
CREATE INDEX "returns_order_id_idx" ON "returns"("order_id");

-- CreateIndex
CREATE INDEX "returns_status_created_at_idx" ON "returns"("status", "created_at");

-- AddForeignKey
ALTER TABLE "returns" ADD CONSTRAINT "returns_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "return_lines" ADD CONSTRAINT "return_lines_return_id_fkey" FOREIGN KEY ("return_id") REFERENCES "returns"("id") ON DELETE CASCADE ON UPDATE CASCADE;
