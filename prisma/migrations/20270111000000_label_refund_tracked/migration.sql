-- When a run of track-label-refund first took up a handed-back label (issue 38): a label whose
-- refund is `submitted` without it some minutes after the request lost its
-- shop/label.refund-requested (a crash between recording the refund and the publish), and
-- recover-stalled-orders starts its tracking.
ALTER TABLE "shipments" ADD COLUMN "label_refund_tracked_at" TIMESTAMPTZ(3);

-- Labels handed back before this column had their runs: nothing to rescue.
UPDATE "shipments" SET "label_refund_tracked_at" = "label_refund_requested_at"
  WHERE "label_refund_status" IS NOT NULL;

CREATE INDEX "shipments_label_refund_untracked_idx" ON "shipments" ("label_refund_requested_at")
  WHERE "label_refund_status" = 'submitted' AND "label_refund_tracked_at" IS NULL;
