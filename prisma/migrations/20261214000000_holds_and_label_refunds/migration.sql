-- Label refunds: what EasyPost said when the bought label of a cancelled or refunded order was
-- handed back (submitted, then refunded or rejected), and when it was asked.
ALTER TABLE "shipments" ADD COLUMN "label_refund_status" TEXT,
ADD COLUMN "label_refund_requested_at" TIMESTAMPTZ(3);

-- Fulfilment holds: an order held by ops (or by the address check) is not booked until released.
ALTER TABLE "orders" ADD COLUMN "hold_reason" TEXT,
ADD COLUMN "hold_note" TEXT,
ADD COLUMN "held_at" TIMESTAMPTZ(3),
ADD COLUMN "held_by" TEXT;
