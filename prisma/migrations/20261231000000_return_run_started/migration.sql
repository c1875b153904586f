-- When process-return's run first read the return (decision 0175): a return still open without it
-- some minutes after it was recorded lost its shop/return.requested (a crash between the insert
-- and the publish), and recover-stalled-returns starts its run.
ALTER TABLE "returns" ADD COLUMN "run_started_at" TIMESTAMPTZ(3);

-- Existing returns had their runs (or ended): nothing to rescue.
UPDATE "returns" SET "run_started_at" = "created_at";

CREATE INDEX "returns_run_not_started_idx" ON "returns" ("created_at") WHERE "run_started_at" IS NULL;
