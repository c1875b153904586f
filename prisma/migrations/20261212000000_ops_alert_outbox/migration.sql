-- Ops alerts outbox: an alert is kept until Slack took it, retried with backoff, grouped by kind.
CREATE TABLE "ops_alerts" (
    "id" UUID NOT NULL,
    "alert_key" TEXT NOT NULL,
    "group_key" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "order_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "lease_token" TEXT,
    "last_error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),

    CONSTRAINT "ops_alerts_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "ops_alerts_alert_key_key" ON "ops_alerts"("alert_key");

CREATE INDEX "ops_alerts_delivered_at_group_key_created_at_idx" ON "ops_alerts"("delivered_at", "group_key", "created_at");

CREATE INDEX "ops_alerts_lease_token_idx" ON "ops_alerts"("lease_token");
