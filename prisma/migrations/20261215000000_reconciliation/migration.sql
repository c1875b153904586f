-- The daily reconciliation against Stripe and the carrier: one report per shop day, its mismatches.
-- CreateTable
CREATE TABLE "reconciliation_runs" (
    "id" UUID NOT NULL,
    "day" TEXT NOT NULL CHECK ("day" ~ '^\d{4}-\d{2}-\d{2}$'),
    "time_zone" TEXT NOT NULL,
    "ran_by" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3) NOT NULL,
    "totals" JSONB NOT NULL DEFAULT '{}',
    "counts" JSONB NOT NULL DEFAULT '{}',
    "mismatch_count" INTEGER NOT NULL DEFAULT 0,
    "stripe_transactions" INTEGER NOT NULL DEFAULT 0,
    "carrier_shipments" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "reconciliation_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reconciliation_mismatches" (
    "id" BIGSERIAL NOT NULL,
    "run_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "order_id" UUID,
    "reference" TEXT NOT NULL,
    "ours" JSONB,
    "theirs" JSONB,
    "detail" TEXT NOT NULL,

    CONSTRAINT "reconciliation_mismatches_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "reconciliation_runs_day_key" ON "reconciliation_runs"("day");

-- CreateIndex
CREATE INDEX "reconciliation_mismatches_run_id_idx" ON "reconciliation_mismatches"("run_id");

-- CreateIndex
CREATE INDEX "reconciliation_mismatches_order_id_idx" ON "reconciliation_mismatches"("order_id");

-- AddForeignKey
ALTER TABLE "reconciliation_mismatches" ADD CONSTRAINT "reconciliation_mismatches_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "reconciliation_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
