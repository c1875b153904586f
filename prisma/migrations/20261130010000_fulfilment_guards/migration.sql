-- A cancellation requested before a fulfilment run claims the order stops that run at its claim.
ALTER TABLE "orders" ADD COLUMN "cancel_requested_at" TIMESTAMPTZ(3);

-- One timeline entry per step outcome and run: a retried step that already wrote its entry writes none.
CREATE UNIQUE INDEX "order_timeline_order_id_kind_run_id_key" ON "order_timeline"("order_id", "kind", "run_id");
