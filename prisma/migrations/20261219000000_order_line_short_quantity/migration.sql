-- Partial fulfilment (PARTIAL_FULFILMENT=ship_available): how many units of a line the fulfilment
-- could not reserve, written by the reservation statement itself, so a retried or replayed
-- reservation reads the same answer. 0 for every line of an order that ships whole.
-- AlterTable
ALTER TABLE "order_lines" ADD COLUMN "short_quantity" INTEGER NOT NULL DEFAULT 0;

ALTER TABLE "order_lines" ADD CONSTRAINT "order_lines_short_quantity_range"
    CHECK ("short_quantity" >= 0 AND "short_quantity" <= "quantity");
