-- When a fulfilment run stopped because a hold landed after its last look at the hold, just before
-- its label purchase (decision 0201): the release of that hold re-drives the order, once (the
-- release's conditional write clears this mark; a re-drive clears it too).
ALTER TABLE "orders" ADD COLUMN "hold_stopped_run_at" TIMESTAMPTZ(3);
