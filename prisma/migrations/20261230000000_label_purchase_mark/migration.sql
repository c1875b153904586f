-- Set by create-shipment (under the order's row lock) before it asks the carrier for a label,
-- cleared when the label's record lands or the attempt fails: a hold asked meanwhile waits for the
-- purchase to settle instead of answering "held" for a parcel that is about to ship (decision 0170).
-- AlterTable
ALTER TABLE "orders" ADD COLUMN "label_purchase_started_at" TIMESTAMPTZ(3);
