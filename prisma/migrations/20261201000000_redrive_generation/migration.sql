-- How many times ops (or the recovery cron) re-drove the order's fulfilment: part of the event id and
-- of fulfill-order's idempotency key, so each re-drive starts a run at once (docs/fulfilment-saga.md).
ALTER TABLE "orders" ADD COLUMN "redrive_generation" INTEGER NOT NULL DEFAULT 0;
